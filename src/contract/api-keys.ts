import { Type, type Static } from 'typebox';
import { ItemList, Nullable, NullableTimestamp, OneOf, Timestamp, Uuid } from './common.ts';
import { RunAddress } from './runs.ts';
import { SCOPES } from './enums.ts';

/** A user's own key, an agent's (a program acting for the user), or a worker's (bound to one run). */
export const API_KEY_KINDS = ['user', 'agent', 'worker'] as const;
export type ApiKeyKind = (typeof API_KEY_KINDS)[number];

export const ApiKey = Type.Object(
  {
    id: Uuid,
    kind: OneOf(API_KEY_KINDS),
    description: Type.String(),
    scopes: Type.Array(Type.String()),
    run_id: Nullable(Uuid),
    created_at: Timestamp,
    expires_at: NullableTimestamp,
    last_used_at: NullableTimestamp,
    revoked_at: NullableTimestamp,
  },
  { $id: 'ApiKey' },
);
export type ApiKey = Static<typeof ApiKey>;

export const CreatedApiKey = Type.Object({
  ...ApiKey.properties,
  key: Type.String({ description: 'the full key; shown only in this answer' }),
});
export type CreatedApiKey = Static<typeof CreatedApiKey>;

export const ApiKeyList = ItemList(ApiKey);
export const ApiKeyParams = Type.Object({ id: Uuid });

export const CreateApiKeyBody = Type.Object(
  {
    description: Type.String({ maxLength: 500 }),
    scopes: Type.Array(OneOf(SCOPES), { minItems: 1, maxItems: SCOPES.length, uniqueItems: true }),
    kind: Type.Optional(OneOf(API_KEY_KINDS)),
    expires_in_days: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 3650, description: "never past the minting key's own expiry" }),
    ),
    run: Type.Optional(RunAddress),
  },
  { additionalProperties: false },
);
export type CreateApiKeyBody = Static<typeof CreateApiKeyBody>;
