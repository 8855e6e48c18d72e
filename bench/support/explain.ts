// Where a slow search spends its time, from EXPLAIN (ANALYZE, BUFFERS) of the service's own statement.
import type pg from 'pg';
import { ms } from './report.ts';

interface PlanNode {
  'Node Type': string;
  'Actual Rows': number;
  'Actual Total Time': number;
  'Shared Hit Blocks'?: number;
  'Shared Read Blocks'?: number;
  Plans?: PlanNode[];
}

function find(node: PlanNode, type: string): PlanNode | undefined {
  if (node['Node Type'] === type) return node;
  for (const child of node.Plans ?? []) {
    const hit = find(child, type);
    if (hit) return hit;
  }
  return undefined;
}

/** One sentence: execution time, matches found, the share of the bitmap heap scan, and the buffers touched. */
export async function explainSearch(pool: pg.Pool, sql: string, params: readonly unknown[]): Promise<string> {
  const rows = (
    await pool.query<{ 'QUERY PLAN': Array<{ Plan: PlanNode; 'Execution Time': number }> }>(
      `EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${sql}`,
      params as unknown[],
    )
  ).rows;
  const { Plan: plan, 'Execution Time': total } = rows[0]!['QUERY PLAN'][0]!;
  const heap = find(plan, 'Bitmap Heap Scan');
  const ranked = heap?.['Actual Rows'] ?? Number.NaN;
  const blocks = (plan['Shared Hit Blocks'] ?? 0) + (plan['Shared Read Blocks'] ?? 0);
  return (
    `execution ${ms(total)} ms for ${ranked.toLocaleString('en')} matching rows; the bitmap index and heap scan that finds them ` +
    `${heap ? ms(heap['Actual Total Time']) : '?'} ms; ${blocks.toLocaleString('en')} 8 kB buffers touched ` +
    `(${(plan['Shared Read Blocks'] ?? 0).toLocaleString('en')} read outside shared_buffers)`
  );
}
