import type { ClientCore } from '../core/client-core.ts';
import type { CreateRunParams } from '../resources/runs.ts';
import type { VariationData } from '../resources/variations.ts';
import { Run } from './run.ts';

/** One variation of an experiment, addressed by experiment id and n. */
export class Variation {
  readonly experimentId: string;
  readonly n: number;
  readonly #core: ClientCore;
  #data: VariationData | undefined;

  constructor(core: ClientCore, experimentId: string, n: number, data?: VariationData) {
    this.#core = core;
    this.experimentId = experimentId;
    this.n = n;
    this.#data = data;
  }

  async data(): Promise<VariationData> {
    this.#data ??= await this.#core.variations.get(this.experimentId, this.n);
    return this.#data;
  }

  refresh(): this {
    this.#data = undefined;
    return this;
  }

  /** Edits the variation (draft experiments only). */
  async update(changes: { configYaml?: string; name?: string }): Promise<VariationData> {
    this.#data = undefined;
    this.#data = await this.#core.variations.update(this.experimentId, this.n, changes);
    return this.#data;
  }

  /** A new pending run of this variation. */
  async createRun(params: CreateRunParams = {}): Promise<Run> {
    const data = await this.#core.runs.create(this.experimentId, this.n, params);
    return new Run(this.#core, this.experimentId, this.n, data.r, data);
  }

  run(r: number): Run {
    return new Run(this.#core, this.experimentId, this.n, r);
  }

  async runs(): Promise<Run[]> {
    return (await this.#core.runs.list(this.experimentId, this.n)).map(
      (d) => new Run(this.#core, this.experimentId, this.n, d.r, d),
    );
  }
}
