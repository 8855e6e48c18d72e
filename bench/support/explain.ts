// Where a slow search spends its time, from EXPLAIN (ANALYZE, BUFFERS) of the service's own statement.
import type pg from 'pg';
import { ms } from './report.ts';

interface PlanNode {
  'Node Type': string;
  'Actual Rows': number;
  'Actual Total Time': number;
  'Actual Loops': number;
  'Relation Name'?: string;
  'Shared Hit Blocks'?: number;
  'Shared Read Blocks'?: number;
  Plans?: PlanNode[];
}

function findAll(node: PlanNode, test: (n: PlanNode) => boolean): PlanNode[] {
  return [...(test(node) ? [node] : []), ...(node.Plans ?? []).flatMap((child) => findAll(child, test))];
}

function find(node: PlanNode, test: (n: PlanNode) => boolean): PlanNode | undefined {
  if (test(node)) return node;
  for (const child of node.Plans ?? []) {
    const hit = find(child, test);
    if (hit) return hit;
  }
  return undefined;
}

/**
 * One sentence: execution time, the postings read (migration 010's way in for one-word and ORed queries), the matches
 * the bitmap heap scan visited (when it ran) and its share, and the buffers touched.
 */
export async function explainSearch(pool: pg.Pool, sql: string, params: readonly unknown[]): Promise<string> {
  const rows = (
    await pool.query<{ 'QUERY PLAN': Array<{ Plan: PlanNode; 'Execution Time': number }> }>(
      `EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${sql}`,
      params as unknown[],
    )
  ).rows;
  const { Plan: plan, 'Execution Time': total } = rows[0]!['QUERY PLAN'][0]!;
  const heap = find(plan, (n) => n['Node Type'] === 'Bitmap Heap Scan' && n['Actual Loops'] > 0);
  // Every way in that reads search_postings (one lexeme, lexemes ORed); the others read none.
  const postings = findAll(plan, (n) => n['Relation Name'] === 'search_postings');
  const posted = postings.reduce((sum, n) => sum + n['Actual Rows'] * n['Actual Loops'], 0);
  const blocks = (plan['Shared Hit Blocks'] ?? 0) + (plan['Shared Read Blocks'] ?? 0);
  return (
    `execution ${ms(total)} ms; ` +
    (postings.length > 0 ? `${posted.toLocaleString('en')} postings read; ` : '') +
    (heap
      ? `the bitmap index and heap scan over ${heap['Actual Rows'].toLocaleString('en')} matching rows ${ms(heap['Actual Total Time'])} ms; `
      : 'no scan of the matches; ') +
    `${blocks.toLocaleString('en')} 8 kB buffers touched ` +
    `(${(plan['Shared Read Blocks'] ?? 0).toLocaleString('en')} read outside shared_buffers)`
  );
}
