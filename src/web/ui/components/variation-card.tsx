import type { ExperimentState, VariationData } from '@assay/client/browser';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { queryKeys } from '../query-keys.ts';
import { useClient } from '../session.tsx';
import { ErrorState } from './status.tsx';

/**
 * One variation: its YAML as written, and the `launch:` and `accelerate:` blocks the server split out of it.
 */
export function VariationCard({
  variation,
  experimentState,
}: {
  variation: VariationData;
  experimentState: ExperimentState;
}) {
  const client = useClient();
  const queryClient = useQueryClient();
  const { experiment_id: id, n } = variation;
  const newRun = useMutation({
    mutationFn: () => client.runs.create(id, n),
    onSuccess: () => void queryClient.invalidateQueries({ queryKey: queryKeys.experiment(id) }),
  });
  return (
    <section className="card variation" aria-labelledby={`variation-${n}`}>
      <div className="card-title">
        <h3 id={`variation-${n}`}>
          Variation {n}
          {variation.name && <span className="muted"> · {variation.name}</span>}
        </h3>
        {experimentState === 'committed' && (
          <button type="button" onClick={() => newRun.mutate()} disabled={newRun.isPending}>
            New run of variation {n}
          </button>
        )}
      </div>
      {newRun.isError && <ErrorState error={newRun.error} title="Could not create the run" />}
      <div className="config-blocks">
        <figure>
          <figcaption>YAML</figcaption>
          <pre className="code">{variation.config_yaml}</pre>
        </figure>
        <ConfigBlock title="launch:" value={variation.launch_config} />
        <ConfigBlock title="accelerate:" value={variation.accelerate_config_json} />
      </div>
    </section>
  );
}

function ConfigBlock({ title, value }: { title: string; value: Record<string, unknown> }) {
  const empty = Object.keys(value).length === 0;
  return (
    <figure>
      <figcaption>{title}</figcaption>
      {empty ? <p className="muted">none</p> : <pre className="code">{JSON.stringify(value, null, 2)}</pre>}
    </figure>
  );
}
