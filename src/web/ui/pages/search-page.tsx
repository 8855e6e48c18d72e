import { SEARCHABLE_ASSET_KINDS } from '@assay/contract/enums';
import type { ScopeHits, SearchHit } from '@assay/client/browser';
import { useQuery } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { Link } from 'wouter';
import { OtherScopesHint, ScopeNote } from '../components/scope-note.tsx';
import { Snippet } from '../components/snippet.tsx';
import { QueryView } from '../components/query-view.tsx';
import { Empty } from '../components/status.tsx';
import { formatTime } from '../format.ts';
import { queryKeys } from '../query-keys.ts';
import { useClient, useSession } from '../session.tsx';

/** Full-text search over the scope's reports, documents and papers, ranked, with the matches highlighted. */
export function SearchPage() {
  const client = useClient();
  const { scope } = useSession();
  const [text, setText] = useState('');
  const [kind, setKind] = useState('');
  // The query runs on submit, not on each keystroke: half-typed websearch syntax is still a valid query.
  const [submitted, setSubmitted] = useState<{ q: string; kind: string } | null>(null);
  const results = useQuery({
    queryKey: queryKeys.search(scope, submitted),
    queryFn: () =>
      client.search.query(submitted!.q, { kind: submitted!.kind || undefined, organizationId: scope }),
    enabled: submitted !== null,
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (text.trim()) setSubmitted({ q: text.trim(), kind });
  };

  return (
    <section aria-labelledby="search-title">
      <h1 id="search-title">Search</h1>
      <form className="filters" role="search" onSubmit={submit}>
        <label className="grow">
          <span>Search reports, documents and papers</span>
          <input
            type="search"
            value={text}
            onChange={(e) => setText(e.target.value)}
            aria-describedby="search-syntax"
            required
          />
        </label>
        <label>
          <span>Kind</span>
          <select value={kind} onChange={(e) => setKind(e.target.value)}>
            <option value="">Any kind</option>
            {SEARCHABLE_ASSET_KINDS.map((k) => (
              <option key={k} value={k}>
                {k}
              </option>
            ))}
          </select>
        </label>
        <button type="submit" className="primary">
          Search
        </button>
      </form>
      <p id="search-syntax" className="hint">
        Words must all match (in any form: “runs” finds “run”). <code>"learning rate"</code> matches the
        phrase, <code>warmup or cosine</code> either word, <code>-baseline</code> excludes a word.
      </p>
      {submitted === null ? (
        <Empty command={'assay search "learning rate" --kind report'}>
          Type a query and press Search. Reports, documents and papers uploaded to this scope are searched.
        </Empty>
      ) : (
        <QueryView query={results} what="results" errorTitle="Could not search">
          {(data) => (
            <>
              <ScopeNote
                scope={data.scope}
                what={`${data.items.length} ${data.items.length === 1 ? 'result' : 'results'}`}
              />
              {data.items.length === 0 ? (
                <Empty command={emptyCommand(submitted.q, data.other_scopes)}>
                  Nothing in this scope matches “{submitted.q}”.{' '}
                  {data.other_scopes.length === 0
                    ? 'Try fewer words, or upload a report.'
                    : 'Other scopes hold matches:'}
                  <OtherScopesHint others={data.other_scopes} />
                </Empty>
              ) : (
                <SearchResults hits={data.items} />
              )}
            </>
          )}
        </QueryView>
      )}
    </section>
  );
}

/** From a terminal: the same search in the first scope that holds matches, or else an upload. */
function emptyCommand(q: string, others: readonly ScopeHits[]): string {
  const first = others[0]?.scope;
  if (!first) return 'assay assets upload --kind report --name … FILE';
  const quoted = `'${q.replace(/'/g, `'\\''`)}'`;
  return `assay search ${quoted} --organization ${first.id === 'personal' ? 'personal' : (first.slug ?? first.id)}`;
}

function SearchResults({ hits }: { hits: SearchHit[] }) {
  return (
    <ol className="search-results" aria-label="Results, best first">
      {hits.map((hit) => (
        <li key={hit.asset_id} className="card">
          <div className="card-title">
            <h2>{hit.name}</h2>
            <span className="badge">{hit.kind}</span>
          </div>
          <Snippet text={hit.snippet} />
          <p className="muted">
            {formatTime(hit.created_at)} · rank {hit.rank.toFixed(3)}
            {hit.experiment_id && (
              <>
                {' · '}
                <Link href={`/experiments/${encodeURIComponent(hit.experiment_id)}`}>its experiment</Link>
              </>
            )}
          </p>
        </li>
      ))}
    </ol>
  );
}
