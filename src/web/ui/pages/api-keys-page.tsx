import type { ApiKeyData, CreatedApiKey } from '@assay/client/browser';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useRef, useState } from 'react';
import { MintKeyForm } from '../components/mint-key-form.tsx';
import { NewKeyNotice } from '../components/new-key-notice.tsx';
import { QueryView, TableScroll } from '../components/query-view.tsx';
import { Empty, ErrorState } from '../components/status.tsx';
import { curlPost, formatTime } from '../format.ts';
import { queryKeys } from '../query-keys.ts';
import { useClient } from '../session.tsx';

function keyState(key: ApiKeyData): 'revoked' | 'expired' | 'active' {
  if (key.revoked_at) return 'revoked';
  if (key.expires_at && Date.parse(key.expires_at) <= Date.now()) return 'expired';
  return 'active';
}

/** The caller's keys: mint one (its secret shown once), list them, revoke one. */
export function ApiKeysPage() {
  const client = useClient();
  const keys = useQuery({ queryKey: queryKeys.apiKeys(), queryFn: () => client.apiKeys.list() });
  const me = useQuery({ queryKey: queryKeys.me(), queryFn: () => client.me.get() });
  const [minted, setMinted] = useState<CreatedApiKey>();
  return (
    <section aria-labelledby="api-keys-title">
      <h1 id="api-keys-title">API keys</h1>
      <p className="hint">
        Keys for scripts, notebooks and agents. A key never holds more than the key that minted it, and
        revoking a key also revokes the keys minted with it.
      </p>
      {minted && <NewKeyNotice created={minted} onDismiss={() => setMinted(undefined)} />}
      <h2>Your keys</h2>
      <QueryView
        query={keys}
        what="keys"
        errorTitle="Could not list the keys"
        isEmpty={(data) => data.length === 0}
        empty={
          <Empty command={curlPost('/api-keys', { description: '…', scopes: ['experiments:read'] })}>
            No keys yet. Mint one below.
          </Empty>
        }
      >
        {(data) => <KeyTable keys={data} inUse={me.data?.auth.key_id ?? null} />}
      </QueryView>
      <MintKeyForm onMinted={setMinted} />
    </section>
  );
}

function KeyTable({ keys, inUse }: { keys: ApiKeyData[]; inUse: string | null }) {
  const client = useClient();
  const queryClient = useQueryClient();
  const dialog = useRef<HTMLDialogElement>(null);
  const [target, setTarget] = useState<ApiKeyData>();
  const revoke = useMutation({
    mutationFn: (id: string) => client.apiKeys.revoke(id),
    onSuccess: () => {
      dialog.current?.close();
      void queryClient.invalidateQueries({ queryKey: queryKeys.apiKeys() });
    },
  });
  const ask = (key: ApiKeyData) => {
    revoke.reset();
    setTarget(key);
    dialog.current?.showModal();
  };
  return (
    <TableScroll>
      <table className="api-keys">
        <thead>
          <tr>
            <th scope="col">Description</th>
            <th scope="col">Kind</th>
            <th scope="col">Scopes</th>
            <th scope="col">Created</th>
            <th scope="col">Expires</th>
            <th scope="col">Last used</th>
            <th scope="col">State</th>
          </tr>
        </thead>
        <tbody>
          {keys.map((key) => {
            const state = keyState(key);
            return (
              <tr key={key.id} data-key={key.id}>
                <td>
                  {key.description || <span className="muted">(no description)</span>}
                  {key.id === inUse && <span className="badge">this session</span>}
                </td>
                <td>{key.kind}</td>
                <td>
                  <ul className="inline-list">
                    {key.scopes.map((s) => (
                      <li key={s}>
                        <code>{s}</code>
                      </li>
                    ))}
                  </ul>
                </td>
                <td>{formatTime(key.created_at)}</td>
                <td>{key.expires_at ? formatTime(key.expires_at) : 'never'}</td>
                <td>{formatTime(key.last_used_at)}</td>
                <td>
                  <div className="row-actions">
                    <span className={`badge key-${state}`}>{state}</span>
                    {state === 'active' && (
                      <button
                        type="button"
                        aria-label={`Revoke key ${key.description || key.id}`}
                        onClick={() => ask(key)}
                      >
                        Revoke…
                      </button>
                    )}
                  </div>
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
      <dialog ref={dialog} aria-labelledby="revoke-title">
        <div className="stacked">
          <h2 id="revoke-title">Revoke this key</h2>
          <p>
            “{target?.description || target?.id}” stops working at once, and so does every key minted with it.
            {target?.id === inUse && ' It is the key of this session: you will be signed out.'}
          </p>
          {revoke.isError && <ErrorState error={revoke.error} />}
          <div className="actions">
            <button
              type="button"
              className="danger"
              disabled={!target || revoke.isPending}
              onClick={() => target && revoke.mutate(target.id)}
            >
              Revoke
            </button>
            <button type="button" onClick={() => dialog.current?.close()}>
              Keep it
            </button>
          </div>
        </div>
      </dialog>
    </TableScroll>
  );
}
