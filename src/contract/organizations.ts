import { Type, type Static } from 'typebox';
import { ItemList, Nullable, OneOf, OrganizationRef, ShortText, Timestamp, Uuid } from './common.ts';
import { CreatedApiKey } from './api-keys.ts';
import { ORGANIZATION_ROLES } from './enums.ts';

const Role = OneOf(ORGANIZATION_ROLES);

export const Organization = Type.Object(
  { id: Uuid, slug: Type.String(), name: Type.String(), role: Role, created_at: Timestamp },
  { $id: 'Organization' },
);
export type Organization = Static<typeof Organization>;

export const Member = Type.Object({
  organization_id: Uuid,
  user_id: Uuid,
  email: Nullable(Type.String()),
  name: Nullable(Type.String()),
  role: Role,
  created_at: Timestamp,
});
export type Member = Static<typeof Member>;
export const MemberList = ItemList(Member);

const Slug = Type.String({
  pattern: '^(?!personal$)[a-z0-9][a-z0-9-]{1,62}$',
  description: 'lowercase letters, digits and dashes; "personal" is reserved',
});

export const CreateOrganizationBody = Type.Object(
  { slug: Slug, name: ShortText() },
  { additionalProperties: false },
);
export type CreateOrganizationBody = Static<typeof CreateOrganizationBody>;

export const AddMemberBody = Type.Union([
  Type.Object({ user_id: Uuid, role: Type.Optional(Role) }, { additionalProperties: false }),
  Type.Object(
    { email: Type.String({ minLength: 3, maxLength: 320 }), role: Type.Optional(Role) },
    { additionalProperties: false },
  ),
]);
export type AddMemberBody = Static<typeof AddMemberBody>;

/**
 * The answer to adding a member: the request as understood, the same whether or not the address or id belongs
 * to a user, so that adding members cannot be used to learn who has an account.
 */
export const MemberAddition = Type.Object({
  organization_id: Uuid,
  user_id: Nullable(Uuid),
  email: Nullable(Type.String()),
  role: Role,
});
export type MemberAddition = Static<typeof MemberAddition>;

/**
 * The owner scope a list or a search looked in: `personal` (slug and name null), or an organization's id with
 * its slug and name. The id is what `organization_id` takes.
 */
export const OwnerScope = Type.Object({
  id: OrganizationRef,
  slug: Nullable(Type.String()),
  name: Nullable(Type.String()),
});
export type OwnerScope = Static<typeof OwnerScope>;

export const OrganizationParams = Type.Object({ id: Uuid });

/** The caller, and the credential in use. */
export const Me = Type.Object({
  id: Uuid,
  email: Nullable(Type.String()),
  name: Nullable(Type.String()),
  is_admin: Type.Boolean(),
  default_organization_id: Nullable(Uuid),
  auth: Type.Object({
    via: Type.String(),
    key_id: Nullable(Uuid),
    scopes: Type.Array(Type.String()),
    run_id: Nullable(Uuid),
  }),
});
export type Me = Static<typeof Me>;

export const EditMeBody = Type.Object(
  { default_organization_id: Nullable(Uuid) },
  { additionalProperties: false },
);

/** The scopes (personal, organizations) the caller may act in. */
export const MyScopes = Type.Object({
  personal: Type.Object({ user_id: Uuid }),
  default_organization_id: Nullable(Uuid),
  organizations: Type.Array(Organization),
});
export type MyScopes = Static<typeof MyScopes>;

export const User = Type.Object({
  id: Uuid,
  email: Type.String(),
  name: Nullable(Type.String()),
  is_admin: Type.Boolean(),
  created_at: Timestamp,
});
export type User = Static<typeof User>;

export const CreateUserBody = Type.Object(
  {
    email: Type.String({ format: 'email', maxLength: 320 }),
    name: Type.Optional(Type.String({ maxLength: 200 })),
    admin: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);
export type CreateUserBody = Static<typeof CreateUserBody>;

export const CreatedUser = Type.Object({ user: User, api_key: CreatedApiKey });
export type CreatedUser = Static<typeof CreatedUser>;
