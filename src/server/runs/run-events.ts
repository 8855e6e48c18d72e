/**
 * What the runs feature tells, and asks of, whoever drives managed runs. Runs sit below orchestration and
 * never import it: orchestration implements this port and `service.ts` passes it in.
 */
export interface RunEvents {
  /** A run moved (started, ended, asked to cancel). Never awaited by a request, never fails one. */
  changed(workflowId: string | null, log: { debug(o: object, m: string): void }): void;
  /** The run's workflow in the Temporal UI, when there is one. */
  workflowUrl(workflowId: string | null): string | null;
}

export const noRunEvents: RunEvents = { changed: () => {}, workflowUrl: () => null };
