import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { Link, useParams } from 'wouter';
import { LineageGraph } from '../components/lineage-graph.tsx';
import { QueryView } from '../components/query-view.tsx';
import { Empty } from '../components/status.tsx';
import { queryKeys } from '../query-keys.ts';
import { useClient } from '../session.tsx';

// The service walks at most 50 generations; a few steps cover what fits on a screen.
const DEPTHS = [1, 2, 3, 5, 10, 20, 50];
const DEFAULT_DEPTH = 10;

/** An experiment's ancestors and descendants as a graph, to a chosen depth. */
export function LineagePage() {
  const { id } = useParams<{ id: string }>();
  const client = useClient();
  const [depth, setDepth] = useState(DEFAULT_DEPTH);
  const lineage = useQuery({
    queryKey: queryKeys.lineage(id, depth),
    queryFn: () => client.experiments.lineage(id, { direction: 'both', depth }),
    // The old graph stays on screen while a new depth loads, so the page does not jump.
    placeholderData: keepPreviousData,
  });
  const self = lineage.data?.nodes.find((n) => n.relation === 'self');
  return (
    <article aria-labelledby="lineage-title">
      <p>
        <Link href={`/experiments/${encodeURIComponent(id)}`}>← {self ? self.name : 'Experiment'}</Link>
      </p>
      <div className="page-title">
        <h1 id="lineage-title">Lineage</h1>
        <label className="inline">
          <span>Depth</span>
          <select value={depth} onChange={(e) => setDepth(Number(e.target.value))}>
            {DEPTHS.map((d) => (
              <option key={d} value={d}>
                {d} {d === 1 ? 'generation' : 'generations'}
              </option>
            ))}
          </select>
        </label>
        {lineage.isFetching && !lineage.isPending && <span className="muted">Updating…</span>}
      </div>
      <QueryView
        query={lineage}
        what="the lineage"
        errorTitle="Could not load the lineage"
        isEmpty={(data) => data.nodes.length <= 1}
        empty={
          <Empty command={`assay experiments create --name "follow-up" --parent ${id}`}>
            This experiment has no parents and no children yet. Name it as a parent when you create a
            follow-up experiment.
          </Empty>
        }
      >
        {(data) => <LineageGraph lineage={data} />}
      </QueryView>
    </article>
  );
}
