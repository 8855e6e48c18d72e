import { Type } from 'typebox';
import {
  LongText,
  Nullable,
  NullableTimestamp,
  OrganizationRef,
  PageQuery,
  ShortText,
  Timestamp,
  Uuid,
} from '../http/schemas.ts';

const State = Type.Union(['draft', 'committed', 'concluded', 'retracted'].map((s) => Type.Literal(s)));

export const Experiment = Type.Object(
  {
    id: Uuid,
    name: Type.String(),
    description: Type.String(),
    hypothesis: Type.String(),
    state: State,
    organization_id: Nullable(Uuid),
    owner_user_id: Uuid,
    parent_ids: Type.Array(Uuid),
    created_at: Timestamp,
    updated_at: Timestamp,
    committed_at: NullableTimestamp,
    concluded_at: NullableTimestamp,
    retracted_at: NullableTimestamp,
    retraction_reason: Nullable(Type.String()),
  },
  { $id: 'Experiment' },
);

const Relative = Type.Object({ id: Uuid, name: Type.String(), state: State });

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

/** A list item: the experiment and its runs counted by state. */
export const ExperimentSummary = Type.Object(
  { ...Experiment.properties, run_counts: RunCounts },
  { $id: 'ExperimentSummary' },
);

export const ExperimentList = Type.Object({
  items: Type.Array(ExperimentSummary),
  next_cursor: Nullable(Type.String()),
});

export const CreateExperiment = Type.Object(
  {
    name: ShortText(),
    description: Type.Optional(LongText()),
    hypothesis: Type.Optional(LongText()),
    parent_ids: Type.Optional(Type.Array(Uuid, { maxItems: 100 })),
    organization_id: Type.Optional(OrganizationRef),
  },
  { additionalProperties: false },
);

export const EditExperiment = Type.Object(
  {
    name: Type.Optional(ShortText()),
    description: Type.Optional(LongText()),
    hypothesis: Type.Optional(LongText()),
  },
  { additionalProperties: false, minProperties: 1 },
);

export const ListExperimentsQuery = Type.Object(
  {
    ...PageQuery,
    state: Type.Optional(State),
    organization_id: Type.Optional(OrganizationRef),
    q: Type.Optional(Type.String({ maxLength: 200 })),
  },
  { additionalProperties: false },
);

export const Retract = Type.Object({ reason: ShortText(2000) }, { additionalProperties: false });

export const LineageQuery = Type.Object(
  {
    direction: Type.Optional(
      Type.Union([Type.Literal('ancestors'), Type.Literal('descendants'), Type.Literal('both')], {
        default: 'both',
      }),
    ),
    depth: Type.Optional(Type.Integer({ minimum: 1, maximum: 50, default: 10 })),
  },
  { additionalProperties: false },
);

export const LineageResponse = Type.Object(
  {
    root_id: Uuid,
    direction: Type.String(),
    depth: Type.Integer(),
    nodes: Type.Array(
      Type.Object({
        id: Uuid,
        name: Type.String(),
        state: State,
        relation: Type.String(),
        depth: Type.Integer(),
      }),
    ),
    edges: Type.Array(Type.Object({ parent_id: Uuid, child_id: Uuid })),
  },
  { $id: 'LineageResponse' },
);

export const ExperimentParams = Type.Object({ id: Uuid });
