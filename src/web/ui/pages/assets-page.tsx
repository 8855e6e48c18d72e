import { ASSET_KINDS, ASSET_STATES } from '@assay/contract/enums';
import { formatBytes, type AssetData, type AssetState } from '@assay/client/browser';
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { useComponentDownload } from '../asset-download.ts';
import { AssetUpload } from '../components/asset-upload.tsx';
import { scopeLabel } from '../components/scope-note.tsx';
import { useCursorPages } from '../components/pager.tsx';
import { QueryView, TableScroll } from '../components/query-view.tsx';
import { Empty, ErrorState, StateBadge } from '../components/status.tsx';
import { formatTime } from '../format.ts';
import { queryKeys } from '../query-keys.ts';
import { useClient, useSession } from '../session.tsx';

const PAGE_SIZE = 50;

/** The assets the caller can see, filtered by kind, state and experiment, with upload and download. */
export function AssetsPage() {
  const client = useClient();
  const { scope } = useSession();
  const [kind, setKind] = useState('');
  const [state, setState] = useState<AssetState | ''>('');
  const [experimentId, setExperimentId] = useState('');
  const pages = useCursorPages();
  const { cursor } = pages;
  const filters = {
    kind: kind || undefined,
    state: state || undefined,
    experimentId: experimentId || undefined,
  };
  const list = useQuery({
    queryKey: queryKeys.assetList(filters, cursor),
    queryFn: () => client.assets.list({ ...filters, cursor, limit: PAGE_SIZE }),
    placeholderData: keepPreviousData,
  });
  // The experiment filter offers the scope's newest experiments (the API's largest page).
  const experiments = useQuery({
    queryKey: queryKeys.experimentChoices(scope),
    queryFn: () => client.experiments.list({ limit: 200, organizationId: scope }),
  });
  const filtered =
    <T,>(set: (v: T) => void) =>
    (v: T) => {
      set(v);
      pages.reset();
    };

  return (
    <section aria-labelledby="assets-title">
      <h1 id="assets-title">Assets</h1>
      <AssetUpload experimentId={filters.experimentId} />
      <form className="filters" role="search" onSubmit={(e) => e.preventDefault()}>
        <label>
          <span>Kind</span>
          <select value={kind} onChange={(e) => filtered(setKind)(e.target.value)}>
            <option value="">Any kind</option>
            {ASSET_KINDS.map((k) => (
              <option key={k} value={k}>
                {k}
              </option>
            ))}
          </select>
        </label>
        <label>
          <span>State</span>
          <select value={state} onChange={(e) => filtered(setState)(e.target.value as AssetState | '')}>
            <option value="">Any state</option>
            {ASSET_STATES.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        </label>
        <label className="grow">
          <span>Experiment</span>
          <select value={experimentId} onChange={(e) => filtered(setExperimentId)(e.target.value)}>
            <option value="">Any experiment</option>
            {experiments.data?.items.map((x) => (
              <option key={x.id} value={x.id}>
                {x.name}
              </option>
            ))}
          </select>
        </label>
      </form>
      {/* The header's scope narrows the experiment filter's choices, not the list: said, not left to guess. */}
      <p className="hint scope-note" data-scope="all">
        Assets in <strong>every scope you can see</strong>
        {experiments.data && (
          <>; the experiment filter offers the experiments of {scopeLabel(experiments.data.scope)}</>
        )}
      </p>
      <QueryView
        query={list}
        what="assets"
        errorTitle="Could not list assets"
        isEmpty={(data) => data.items.length === 0}
        empty={
          <Empty command="assay assets upload --kind document FILE">
            {kind || state || experimentId
              ? 'No asset matches these filters.'
              : 'No assets yet. Drop a file above to upload one.'}
          </Empty>
        }
        pager={{ pages, nextCursor: list.data?.next_cursor }}
      >
        {(data, stale) => <AssetTable items={data.items} stale={stale} />}
      </QueryView>
    </section>
  );
}

function AssetTable({ items, stale }: { items: AssetData[]; stale: boolean }) {
  return (
    <TableScroll stale={stale}>
      <table className="assets">
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Kind</th>
            <th scope="col">State</th>
            <th scope="col">Size</th>
            <th scope="col">Created</th>
            <th scope="col">Download</th>
          </tr>
        </thead>
        <tbody>
          {items.map((a) => (
            <tr key={a.id} data-asset={a.id}>
              <td>{a.name}</td>
              <td>{a.kind}</td>
              <td>
                <StateBadge state={a.state} />
              </td>
              <td>{formatBytes(Object.values(a.components).reduce((sum, c) => sum + c.size, 0))}</td>
              <td>{formatTime(a.created_at)}</td>
              <td>{a.state === 'ready' ? <DownloadButtons asset={a} /> : '—'}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </TableScroll>
  );
}

/** One button per component of a ready asset. */
function DownloadButtons({ asset }: { asset: AssetData }) {
  const download = useComponentDownload(asset);
  return (
    <div className="row-actions">
      {Object.keys(asset.components).map((name) => (
        <button
          type="button"
          key={name}
          onClick={() => download.mutate(name)}
          disabled={download.isPending}
          aria-label={`Download ${name} of ${asset.name}`}
        >
          Download {name}
        </button>
      ))}
      {download.isError && <ErrorState error={download.error} title="Could not download" />}
    </div>
  );
}
