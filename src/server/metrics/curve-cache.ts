import type { StoredPoint } from './metric-repository.ts';

/** A downsampled read of one series' step range, as `readDownsampled` answers it. */
export interface CachedCurve {
  count: number;
  downsampled: boolean;
  points: StoredPoint[];
}

/**
 * Downsampled curves of ended runs, by series, series version and request (`getExperimentMetricSeries` says
 * why a version stands for the points), so the compare page's second look at an experiment whose runs have
 * ended reads no points from PostgreSQL: 100 curves of 10,000 points were about 1 s of its CPU on every read
 * (2 cores, load ≈ 10). The least recently read curve goes first once the curves held pass `maxPoints` points
 * in all. One per service instance: series ids are only unique within one database.
 */
export class CurveCache {
  readonly #curves = new Map<string, CachedCurve>();
  #points = 0;

  readonly maxPoints: number;

  constructor(maxPoints: number) {
    this.maxPoints = maxPoints;
  }

  get(key: string): CachedCurve | undefined {
    const curve = this.#curves.get(key);
    if (curve) {
      // Map keeps insertion order: moving the key to the end makes the first key the least recently read.
      this.#curves.delete(key);
      this.#curves.set(key, curve);
    }
    return curve;
  }

  set(key: string, curve: CachedCurve): void {
    if (curve.points.length > this.maxPoints) return;
    const old = this.#curves.get(key);
    if (old) this.#points -= old.points.length;
    this.#curves.delete(key);
    this.#curves.set(key, curve);
    this.#points += curve.points.length;
    for (const [first, evicted] of this.#curves) {
      if (this.#points <= this.maxPoints) break;
      this.#curves.delete(first);
      this.#points -= evicted.points.length;
    }
  }

  get size(): number {
    return this.#curves.size;
  }
}
