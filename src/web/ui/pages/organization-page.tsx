import { ORGANIZATION_ROLES, type OrganizationRole } from '@assay/contract/enums';
import type { Member, Organization } from '@assay/client/browser';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { Link } from 'wouter';
import { QueryView, TableScroll } from '../components/query-view.tsx';
import { Empty, ErrorState } from '../components/status.tsx';
import { curlPost, formatTime } from '../format.ts';
import { queryKeys } from '../query-keys.ts';
import { useClient } from '../session.tsx';

/** One organization: its members, and (for owners) a form to add an existing user by email. */
export function OrganizationPage({ params }: { params: { id: string } }) {
  const client = useClient();
  const organization = useQuery({
    queryKey: queryKeys.organization(params.id),
    queryFn: () => client.organizations.get(params.id),
  });
  const members = useQuery({
    queryKey: queryKeys.members(params.id),
    queryFn: () => client.organizations.members(params.id),
  });
  return (
    <section aria-labelledby="organization-title">
      <p>
        <Link href="/organizations">← Organizations</Link>
      </p>
      <QueryView query={organization} what="the organization" errorTitle="Could not open the organization">
        {(org) => (
          <>
            <div className="page-title">
              <h1 id="organization-title">{org.name}</h1>
              <code>{org.slug}</code>
              <span className="badge">you: {org.role}</span>
            </div>
            <h2>Members</h2>
            <QueryView
              query={members}
              what="members"
              errorTitle="Could not list the members"
              isEmpty={(data) => data.length === 0}
              empty={<Empty>No members.</Empty>}
            >
              {(data) => <MemberTable members={data} />}
            </QueryView>
            {org.role === 'owner' ? (
              <AddMemberForm organization={org} />
            ) : (
              <p className="hint">Only an owner can add members.</p>
            )}
          </>
        )}
      </QueryView>
    </section>
  );
}

function MemberTable({ members }: { members: Member[] }) {
  return (
    <TableScroll>
      <table className="members">
        <thead>
          <tr>
            <th scope="col">Email</th>
            <th scope="col">Name</th>
            <th scope="col">Role</th>
            <th scope="col">Since</th>
          </tr>
        </thead>
        <tbody>
          {members.map((m) => (
            <tr key={m.user_id}>
              <td>{m.email ?? <span className="muted">{m.user_id}</span>}</td>
              <td>{m.name ?? '—'}</td>
              <td>{m.role}</td>
              <td>{formatTime(m.created_at)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </TableScroll>
  );
}

function AddMemberForm({ organization }: { organization: Organization }) {
  const client = useClient();
  const queryClient = useQueryClient();
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<OrganizationRole>('member');
  const add = useMutation({
    mutationFn: () => client.organizations.addMember(organization.id, { email: email.trim(), role }),
    onSuccess: () => {
      setEmail('');
      void queryClient.invalidateQueries({ queryKey: queryKeys.members(organization.id) });
    },
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    add.mutate();
  };
  return (
    <form className="stacked" onSubmit={submit} aria-labelledby="add-member-title">
      <h2 id="add-member-title">Add a member</h2>
      <p className="hint">
        They need an Assay account already (an admin creates one with <code>assay admin create-user</code>).
        Or: <code>{curlPost(`/organizations/${organization.id}/members`, { email: '…' })}</code>
      </p>
      <label>
        <span>Email</span>
        <input type="email" value={email} onChange={(e) => setEmail(e.target.value)} required />
      </label>
      <label>
        <span>Role</span>
        <select value={role} onChange={(e) => setRole(e.target.value as OrganizationRole)}>
          {ORGANIZATION_ROLES.map((r) => (
            <option key={r} value={r}>
              {r}
            </option>
          ))}
        </select>
      </label>
      <button type="submit" className="primary" disabled={add.isPending}>
        {add.isPending ? 'Adding…' : 'Add member'}
      </button>
      {add.isError && <ErrorState error={add.error} title="Could not add the member" />}
      {add.isSuccess && (
        <p role="status">
          If {add.data.email ?? add.data.user_id} has an Assay account, they are now a {add.data.role} (the
          members list shows who is in).
        </p>
      )}
    </form>
  );
}
