import type { Variation } from '@assay/contract';
import { path } from '../core/path.ts';
import type { Transport } from '../core/transport.ts';

export type { LaunchConfig } from '@assay/contract';

/** A variation as the service answers it (the contract's Variation); `launch_config` is a LaunchConfig. */
export type VariationData = Variation;

/** The variations namespace: configs of an experiment, numbered n = 1, 2, … */
export class Variations {
  readonly #t: Transport;

  constructor(transport: Transport) {
    this.#t = transport;
  }

  /**
   * Creates a variation from YAML (draft experiments only); `accelerate:` and `launch:` blocks are split out.
   */
  create(experimentId: string, params: { configYaml: string; name?: string }): Promise<VariationData> {
    return this.#t.post(path`/experiments/${experimentId}/variations`, {
      config_yaml: params.configYaml,
      name: params.name,
    });
  }

  /** All variations of an experiment, by n. */
  async list(experimentId: string): Promise<VariationData[]> {
    return (await this.#t.get<{ items: VariationData[] }>(path`/experiments/${experimentId}/variations`))
      .items;
  }

  get(experimentId: string, n: number): Promise<VariationData> {
    return this.#t.get(path`/experiments/${experimentId}/variations/${n}`);
  }

  /** Edits a variation of a draft experiment. */
  update(
    experimentId: string,
    n: number,
    changes: { configYaml?: string; name?: string },
  ): Promise<VariationData> {
    return this.#t.request('PATCH', path`/experiments/${experimentId}/variations/${n}`, {
      body: { config_yaml: changes.configYaml, name: changes.name },
    });
  }
}
