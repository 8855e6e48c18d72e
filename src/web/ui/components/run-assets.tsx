import { formatBytes, type AssetData, type RunRef } from '@assay/client/browser';
import { useInfiniteQuery } from '@tanstack/react-query';
import { useComponentDownload } from '../asset-download.ts';
import { formatTime } from '../format.ts';
import { queryKeys } from '../query-keys.ts';
import { useClient } from '../session.tsx';
import { QueryView, TableScroll } from './query-view.tsx';
import { Empty, ErrorState, StateBadge } from './status.tsx';

const PAGE_SIZE = 50;

/** The run's outputs and checkpoints, newest first, each ready component downloadable. */
export function RunAssets({ run }: { run: RunRef }) {
  const client = useClient();
  const assets = useInfiniteQuery({
    queryKey: queryKeys.runAssets(run.experimentId, run.n, run.r),
    queryFn: ({ pageParam }) => client.assets.list({ run, limit: PAGE_SIZE, cursor: pageParam }),
    initialPageParam: undefined as string | undefined,
    getNextPageParam: (page) => page.next_cursor ?? undefined,
  });
  return (
    <QueryView
      query={assets}
      what="the run's assets"
      errorTitle="Could not load the run's assets"
      isEmpty={(data) => data.pages.every((p) => p.items.length === 0)}
      empty={
        <Empty
          command={`assay assets upload --experiment ${run.experimentId} --variation ${run.n} --run ${run.r} --kind output FILE`}
        >
          This run has no assets yet. A runner&apos;s outputs and checkpoints appear here once uploaded.
        </Empty>
      }
    >
      {(data) => (
        <>
          <AssetTable items={data.pages.flatMap((p) => p.items)} />
          {assets.hasNextPage && (
            <p>
              <button
                type="button"
                onClick={() => void assets.fetchNextPage()}
                disabled={assets.isFetchingNextPage}
              >
                {assets.isFetchingNextPage ? 'Loading…' : 'More assets'}
              </button>
            </p>
          )}
        </>
      )}
    </QueryView>
  );
}

function AssetTable({ items }: { items: AssetData[] }) {
  return (
    <TableScroll>
      <table aria-label="Run assets">
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Kind</th>
            <th scope="col">State</th>
            <th scope="col">Components</th>
            <th scope="col">Created</th>
          </tr>
        </thead>
        <tbody>
          {items.map((a) => (
            <AssetRow key={a.id} asset={a} />
          ))}
        </tbody>
      </table>
    </TableScroll>
  );
}

function AssetRow({ asset }: { asset: AssetData }) {
  const download = useComponentDownload(asset);
  const components = Object.entries(asset.components).sort(([x], [y]) => x.localeCompare(y));
  return (
    <tr>
      <td>
        {asset.name}
        <div className="muted">
          <code>{asset.id}</code>
        </div>
      </td>
      <td>{asset.kind}</td>
      <td>
        <StateBadge state={asset.state} />
      </td>
      <td>
        <ul className="asset-components">
          {components.map(([name, info]) => (
            <li key={name}>
              <span>{name}</span> <span className="muted">{formatBytes(info.size)}</span>{' '}
              {asset.state === 'ready' ? (
                <button
                  type="button"
                  onClick={() => download.mutate(name)}
                  disabled={download.isPending}
                  aria-label={`Download ${name} of ${asset.name}`}
                >
                  Download
                </button>
              ) : (
                <span className="muted">uploading</span>
              )}
            </li>
          ))}
        </ul>
        {download.isError && <ErrorState error={download.error} title="Could not download" />}
      </td>
      <td>{formatTime(asset.created_at)}</td>
    </tr>
  );
}
