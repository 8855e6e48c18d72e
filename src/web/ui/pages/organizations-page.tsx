import type { ScopesData } from '@assay/client/browser';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { Link, useLocation } from 'wouter';
import { QueryView, TableScroll } from '../components/query-view.tsx';
import { Empty, ErrorState } from '../components/status.tsx';
import { curlPost, formatTime } from '../format.ts';
import { queryKeys } from '../query-keys.ts';
import { useClient } from '../session.tsx';

/** The organizations the caller belongs to, with their role, and a form to create one. */
export function OrganizationsPage() {
  const client = useClient();
  const scopes = useQuery({ queryKey: queryKeys.scopes(), queryFn: () => client.me.scopes() });
  return (
    <section aria-labelledby="organizations-title">
      <h1 id="organizations-title">Organizations</h1>
      <p className="hint">
        An organization shares its experiments, runs and assets with its members; pick it in the Scope menu to
        work in it.
      </p>
      <QueryView
        query={scopes}
        what="organizations"
        errorTitle="Could not list your organizations"
        isEmpty={(data) => data.organizations.length === 0}
        empty={
          <Empty command={curlPost('/organizations', { slug: '…', name: '…' })}>
            You belong to no organization yet. Create one below, or ask an owner to add you.
          </Empty>
        }
      >
        {(data) => <OrganizationTable scopes={data} />}
      </QueryView>
      <CreateOrganizationForm />
    </section>
  );
}

function OrganizationTable({ scopes }: { scopes: ScopesData }) {
  return (
    <TableScroll>
      <table className="organizations">
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Slug</th>
            <th scope="col">Your role</th>
            <th scope="col">Created</th>
          </tr>
        </thead>
        <tbody>
          {scopes.organizations.map((o) => (
            <tr key={o.id}>
              <td>
                <Link href={`/organizations/${encodeURIComponent(o.id)}`}>{o.name}</Link>
                {o.id === scopes.default_organization_id && <span className="badge">default</span>}
              </td>
              <td>
                <code>{o.slug}</code>
              </td>
              <td>{o.role}</td>
              <td>{formatTime(o.created_at)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </TableScroll>
  );
}

function CreateOrganizationForm() {
  const client = useClient();
  const queryClient = useQueryClient();
  const [, navigate] = useLocation();
  const [name, setName] = useState('');
  const [slug, setSlug] = useState('');
  const create = useMutation({
    mutationFn: () => client.organizations.create({ slug, name }),
    onSuccess: (created) => {
      // The header's scope menu lists the organizations from the same query.
      void queryClient.invalidateQueries({ queryKey: queryKeys.scopes() });
      navigate(`/organizations/${encodeURIComponent(created.id)}`);
    },
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    create.mutate();
  };
  return (
    <form className="stacked" onSubmit={submit} aria-labelledby="create-organization-title">
      <h2 id="create-organization-title">Create an organization</h2>
      <label>
        <span>Name</span>
        <input value={name} onChange={(e) => setName(e.target.value)} required maxLength={200} />
      </label>
      <label>
        <span>Slug</span>
        <input
          value={slug}
          onChange={(e) => setSlug(e.target.value)}
          required
          aria-describedby="slug-hint"
          autoCapitalize="none"
          spellCheck={false}
        />
      </label>
      <p id="slug-hint" className="hint">
        2–63 lowercase letters, digits and dashes, starting with a letter or digit; used by{' '}
        <code>--organization</code> in the CLI. “personal” is reserved.
      </p>
      <button type="submit" className="primary" disabled={create.isPending}>
        {create.isPending ? 'Creating…' : 'Create organization'}
      </button>
      {create.isError && <ErrorState error={create.error} title="Could not create the organization" />}
    </form>
  );
}
