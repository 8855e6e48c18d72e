import type { ClientCore } from '../core/client-core.ts';
import type { ExperimentData, ExperimentDetail, LineageResponse } from '../resources/experiments.ts';
import { Variation } from './variation.ts';

/** One experiment. Its detail is fetched once and kept until a mutation through this handle drops it. */
export class Experiment {
  readonly id: string;
  readonly #core: ClientCore;
  #detail: ExperimentDetail | undefined;

  constructor(core: ClientCore, id: string) {
    this.#core = core;
    this.id = id;
  }

  /** The detail (variations, run counts, parents, children); cached on this handle until it mutates. */
  async data(): Promise<ExperimentDetail> {
    this.#detail ??= await this.#core.experiments.get(this.id);
    return this.#detail;
  }

  /** Forgets the cached detail so the next `data()` reads the server again. */
  refresh(): this {
    this.#detail = undefined;
    return this;
  }

  async #mutate<T>(op: Promise<T>): Promise<T> {
    this.#detail = undefined;
    try {
      return await op;
    } finally {
      this.#detail = undefined;
    }
  }

  update(changes: { name?: string; description?: string; hypothesis?: string }): Promise<ExperimentData> {
    return this.#mutate(this.#core.experiments.update(this.id, changes));
  }

  commit(): Promise<ExperimentData> {
    return this.#mutate(this.#core.experiments.commit(this.id));
  }

  conclude(): Promise<ExperimentData> {
    return this.#mutate(this.#core.experiments.conclude(this.id));
  }

  retract(reason: string): Promise<ExperimentData> {
    return this.#mutate(this.#core.experiments.retract(this.id, reason));
  }

  lineage(params?: {
    direction?: 'ancestors' | 'descendants' | 'both';
    depth?: number;
  }): Promise<LineageResponse> {
    return this.#core.experiments.lineage(this.id, params);
  }

  /** Adds a variation from YAML and returns its handle. */
  async createVariation(configYaml: string, name?: string): Promise<Variation> {
    const data = await this.#mutate(this.#core.variations.create(this.id, { configYaml, name }));
    return new Variation(this.#core, this.id, data.n, data);
  }

  variation(n: number): Variation {
    return new Variation(this.#core, this.id, n);
  }

  async variations(): Promise<Variation[]> {
    return (await this.#core.variations.list(this.id)).map((v) => new Variation(this.#core, this.id, v.n, v));
  }
}
