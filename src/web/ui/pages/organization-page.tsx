import { ORGANIZATION_ROLES, type OrganizationRole } from '@assay/contract';
import type { Member, Organization } from '@assay/client/browser';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { Link } from 'wouter';
import { Empty, ErrorState, Loading } from '../components/status.tsx';
import { curlPost, formatTime } from '../format.ts';
import { useClient } from '../session.tsx';

/** One organization: its members, and (for owners) a form to add an existing user by email. */
export function OrganizationPage({ params }: { params: { id: string } }) {
  const client = useClient();
  const organization = useQuery({
    queryKey: ['organizations', params.id],
    queryFn: () => client.organizations.get(params.id),
  });
  const members = useQuery({
    queryKey: ['organizations', params.id, 'members'],
    queryFn: () => client.organizations.members(params.id),
  });
  return (
    <section aria-labelledby="organization-title">
      <p>
        <Link href="/organizations">← Organizations</Link>
      </p>
      {organization.isPending ? (
        <Loading what="the organization" />
      ) : organization.isError ? (
        <ErrorState error={organization.error} title="Could not open the organization" />
      ) : (
        <>
          <div className="page-title">
            <h1 id="organization-title">{organization.data.name}</h1>
            <code>{organization.data.slug}</code>
            <span className="badge">you: {organization.data.role}</span>
          </div>
          <h2>Members</h2>
          {members.isPending ? (
            <Loading what="members" />
          ) : members.isError ? (
            <ErrorState error={members.error} title="Could not list the members" />
          ) : members.data.length === 0 ? (
            <Empty>No members.</Empty>
          ) : (
            <MemberTable members={members.data} />
          )}
          {organization.data.role === 'owner' ? (
            <AddMemberForm organization={organization.data} />
          ) : (
            <p className="hint">Only an owner can add members.</p>
          )}
        </>
      )}
    </section>
  );
}

function MemberTable({ members }: { members: Member[] }) {
  return (
    <div className="table-scroll">
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
    </div>
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
      void queryClient.invalidateQueries({ queryKey: ['organizations', organization.id, 'members'] });
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
