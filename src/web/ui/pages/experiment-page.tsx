import type { ExperimentDetail } from '@assay/client/browser';
import { useQuery } from '@tanstack/react-query';
import { Link, useParams } from 'wouter';
import { AddVariationForm } from '../components/add-variation-form.tsx';
import { ExperimentActions } from '../components/experiment-actions.tsx';
import { ExperimentTags } from '../components/experiment-tags.tsx';
import { RunsSection } from '../components/runs-section.tsx';
import { QueryView } from '../components/query-view.tsx';
import { Empty, ErrorState, Loading, StateBadge } from '../components/status.tsx';
import { SweepForm } from '../components/sweep-form.tsx';
import { SweepList } from '../components/sweep-list.tsx';
import { VariationCard } from '../components/variation-card.tsx';
import { formatTime } from '../format.ts';
import { queryKeys } from '../query-keys.ts';
import { useClient } from '../session.tsx';

export function ExperimentPage() {
  const { id } = useParams<{ id: string }>();
  const client = useClient();
  const detail = useQuery({ queryKey: queryKeys.experiment(id), queryFn: () => client.experiments.get(id) });
  const variations = useQuery({
    queryKey: queryKeys.variations(id),
    queryFn: () => client.variations.list(id),
  });
  if (detail.isPending) return <Loading what="the experiment" />;
  if (detail.isError) return <ErrorState error={detail.error} title="Could not load the experiment" />;
  const experiment = detail.data;
  return (
    <article aria-labelledby="experiment-title">
      <p>
        <Link href="/">← Experiments</Link>
      </p>
      <div className="page-title">
        <h1 id="experiment-title">{experiment.name}</h1>
        <StateBadge state={experiment.state} />
      </div>
      <ExperimentActions experiment={experiment} />
      <ExperimentFacts experiment={experiment} />
      {/* A sweep commits the draft it is made on: a draft has none to list. */}
      {experiment.state !== 'draft' && <SweepList experimentId={experiment.id} />}
      <section aria-labelledby="variations-title">
        <h2 id="variations-title">Variations</h2>
        <QueryView
          query={variations}
          what="variations"
          errorTitle="Could not load the variations"
          isEmpty={(data) => data.length === 0}
          empty={
            <Empty command={`assay variations create ${experiment.id} --file config.yaml`}>
              No variations yet. Add one from YAML below; commit the experiment once its variations are ready.
            </Empty>
          }
        >
          {(data) =>
            data.map((v) => <VariationCard key={v.n} variation={v} experimentState={experiment.state} />)
          }
        </QueryView>
        {experiment.state === 'draft' && <AddVariationForm experimentId={experiment.id} />}
        {experiment.state === 'draft' && <SweepForm experimentId={experiment.id} />}
      </section>
      {variations.data && variations.data.length > 0 && (
        <>
          <RunsSection experiment={experiment} variations={variations.data} />
          {experiment.state !== 'draft' && (
            <p>
              <Link href={`/experiments/${encodeURIComponent(experiment.id)}/compare`}>Compare runs</Link>
            </p>
          )}
        </>
      )}
    </article>
  );
}

function ExperimentFacts({ experiment }: { experiment: ExperimentDetail }) {
  return (
    <dl className="facts">
      <dt>Hypothesis</dt>
      <dd className="prose">{experiment.hypothesis || '—'}</dd>
      <dt>Description</dt>
      <dd className="prose">{experiment.description || '—'}</dd>
      {experiment.retraction_reason && (
        <>
          <dt>Retracted because</dt>
          <dd className="prose">{experiment.retraction_reason}</dd>
        </>
      )}
      <dt>Tags</dt>
      <dd>
        <ExperimentTags experiment={experiment} />
      </dd>
      <dt>Created</dt>
      <dd>{formatTime(experiment.created_at)}</dd>
      {experiment.committed_at && (
        <>
          <dt>Committed</dt>
          <dd>{formatTime(experiment.committed_at)}</dd>
        </>
      )}
      <dt>Parents</dt>
      <dd>
        <RelativeLinks items={experiment.parents} none="none" />
      </dd>
      <dt>Children</dt>
      <dd>
        <RelativeLinks items={experiment.children} none="none" />
      </dd>
      <dt>Lineage</dt>
      <dd>
        <Link href={`/experiments/${encodeURIComponent(experiment.id)}/lineage`}>Lineage graph</Link>
      </dd>
    </dl>
  );
}

function RelativeLinks({ items, none }: { items: ExperimentDetail['parents']; none: string }) {
  if (items.length === 0) return <span className="muted">{none}</span>;
  return (
    <ul className="inline-list">
      {items.map((r) => (
        <li key={r.id}>
          <Link href={`/experiments/${encodeURIComponent(r.id)}`}>{r.name}</Link>{' '}
          <StateBadge state={r.state} />
        </li>
      ))}
    </ul>
  );
}
