import { Type, type Static } from 'typebox';
import {
  LongText,
  Nullable,
  NullableTimestamp,
  OneOf,
  OrganizationRef,
  Page,
  PageQuery,
  ShortText,
  Timestamp,
  Uuid,
} from './common.ts';
import { OwnerScope } from './organizations.ts';
import { Tags } from './tags.ts';
import { EXPERIMENT_STATES } from './enums.ts';

export const ExperimentStateSchema = OneOf(EXPERIMENT_STATES);

export const Experiment = Type.Object(
  {
    id: Uuid,
    name: Type.String(),
    description: Type.String(),
    hypothesis: Type.String(),
    state: ExperimentStateSchema,
    organization_id: Nullable(Uuid),
    owner_user_id: Uuid,
    parent_ids: Type.Array(Uuid),
    created_at: Timestamp,
    updated_at: Timestamp,
    committed_at: NullableTimestamp,
    concluded_at: NullableTimestamp,
    retracted_at: NullableTimestamp,
    retraction_reason: Nullable(Type.String()),
    tags: Tags,
  },
  { $id: 'Experiment' },
);
export type Experiment = Static<typeof Experiment>;

const Relative = Type.Object({ id: Uuid, name: Type.String(), state: ExperimentStateSchema });

const RunCounts = Type.Object({
  pending: Type.Integer(),
  running: Type.Integer(),
  succeeded: Type.Integer(),
  failed: Type.Integer(),
});

export const ExperimentDetail = Type.Object(
  {
    ...Experiment.properties,
    variations: Type.Array(Type.Object({ n: Type.Integer(), name: Type.String(), created_at: Timestamp })),
    run_counts: RunCounts,
    parents: Type.Array(Relative),
    children: Type.Array(Relative),
  },
  { $id: 'ExperimentDetail' },
);
export type ExperimentDetail = Static<typeof ExperimentDetail>;

/** A list item: the experiment and its runs counted by state. */
export const ExperimentSummary = Type.Object(
  { ...Experiment.properties, run_counts: RunCounts },
  { $id: 'ExperimentSummary' },
);
export type ExperimentSummary = Static<typeof ExperimentSummary>;
export type RunCounts = Static<typeof RunCounts>;

/** One page of a scope's experiments, and the scope listed. */
export const ExperimentList = Type.Object({
  ...Page(ExperimentSummary).properties,
  scope: OwnerScope,
});

export const CreateExperimentBody = Type.Object(
  {
    name: ShortText(),
    description: Type.Optional(LongText()),
    hypothesis: Type.Optional(LongText()),
    parent_ids: Type.Optional(Type.Array(Uuid, { maxItems: 100 })),
    organization_id: Type.Optional(OrganizationRef),
    tags: Type.Optional(Tags),
  },
  { additionalProperties: false },
);
export type CreateExperimentBody = Static<typeof CreateExperimentBody>;

export const EditExperimentBody = Type.Object(
  {
    name: Type.Optional(ShortText()),
    description: Type.Optional(LongText()),
    hypothesis: Type.Optional(LongText()),
    tags: Type.Optional(Tags),
  },
  { additionalProperties: false, minProperties: 1 },
);
export type EditExperimentBody = Static<typeof EditExperimentBody>;

export const ListExperimentsQuery = Type.Object(
  {
    ...PageQuery,
    state: Type.Optional(ExperimentStateSchema),
    organization_id: Type.Optional(OrganizationRef),
    q: Type.Optional(Type.String({ maxLength: 200 })),
    tag: Type.Optional(
      Type.String({
        // Percent-encoded UTF-8 is up to 12 bytes a character: within the 16 KiB of a request's head.
        maxLength: 800,
        description: 'comma-separated; an experiment has every one',
      }),
    ),
  },
  { additionalProperties: false },
);
export type ListExperimentsQuery = Static<typeof ListExperimentsQuery>;

export const RetractBody = Type.Object({ reason: ShortText(2000) }, { additionalProperties: false });

export const LINEAGE_DIRECTIONS = ['ancestors', 'descendants', 'both'] as const;
export type LineageDirection = (typeof LINEAGE_DIRECTIONS)[number];

export const LineageQuery = Type.Object(
  {
    direction: Type.Optional(OneOf(LINEAGE_DIRECTIONS, { default: 'both' })),
    depth: Type.Optional(Type.Integer({ minimum: 1, maximum: 50, default: 10 })),
  },
  { additionalProperties: false },
);
export type LineageQuery = Static<typeof LineageQuery>;

export const LineageResponse = Type.Object(
  {
    root_id: Uuid,
    direction: Type.String(),
    depth: Type.Integer(),
    nodes: Type.Array(
      Type.Object({
        id: Uuid,
        name: Type.String(),
        state: ExperimentStateSchema,
        relation: Type.String({ description: 'self, ancestor or descendant' }),
        depth: Type.Integer(),
      }),
    ),
    edges: Type.Array(Type.Object({ parent_id: Uuid, child_id: Uuid })),
  },
  { $id: 'LineageResponse' },
);
export type LineageResponse = Static<typeof LineageResponse>;

export const ExperimentParams = Type.Object({ id: Uuid });
