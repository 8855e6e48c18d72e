import { Type, type Static } from 'typebox';
import {
  ItemList,
  JsonObject,
  Nullable,
  NullableTimestamp,
  OneOf,
  Page,
  PageQuery,
  PositiveInt32,
  Timestamp,
  Uuid,
} from './common.ts';
import { LaunchConfig } from './launch.ts';
import { Tags } from './tags.ts';
import { VariationNumber } from './variations.ts';
import { RUN_STATES, type RunState } from './enums.ts';

/** Reasons a runner may give when it fails its own run. */
export const RUNNER_FAILURE_REASONS = ['abandoned', 'crash'] as const;
/**
 * Reasons the orchestrator may give when it fails a managed run: the runner's and the two only it detects.
 */
export const ORCHESTRATOR_FAILURE_REASONS = [
  'provision_failed',
  'heartbeat_timeout',
  'abandoned',
  'crash',
  'stopped_early',
  'preempted',
] as const;
/** Every reason a failed run may carry (the watchdog's `heartbeat_timeout` among them). */
export const FAILURE_REASONS = [
  'abandoned',
  'crash',
  'heartbeat_timeout',
  'provision_failed',
  'stopped_early',
  'preempted',
] as const;
/** Failures a sweep retries (a new run of the trial's variation) while it has `max_retries` left. */
export const RETRYABLE_FAILURE_REASONS: readonly FailureReason[] = [
  'crash',
  'heartbeat_timeout',
  'provision_failed',
  'preempted',
];
/**
 * Why a cancel was asked: a person or a sweep's cancel (`cancelled`), or the sweep's early stopping
 * (`stopped_early`, and the run then fails with that reason).
 */
export const CANCEL_REASONS = ['cancelled', 'stopped_early'] as const;
export type CancelReason = (typeof CANCEL_REASONS)[number];
export type FailureReason = (typeof FAILURE_REASONS)[number];
export type RunnerFailureReason = (typeof RUNNER_FAILURE_REASONS)[number];
export type OrchestratorFailureReason = (typeof ORCHESTRATOR_FAILURE_REASONS)[number];

export type RunMove =
  | 'start'
  | 'heartbeat'
  | 'succeed'
  | 'fail'
  | 'cancel_pending'
  | 'request_cancel'
  | 'time_out'
  | 'conclude_failed';

/** The run state machine as data: each move, the states it may start from, and where it leads. */
export const RUN_MOVES: Readonly<Record<RunMove, { from: readonly RunState[]; to: RunState }>> = {
  start: { from: ['pending'], to: 'running' },
  heartbeat: { from: ['running'], to: 'running' },
  succeed: { from: ['running'], to: 'succeeded' },
  fail: { from: ['running'], to: 'failed' },
  // A cancel before the runner started ends the run at once; a running one is asked to stop via
  // its heartbeat.
  cancel_pending: { from: ['pending'], to: 'failed' },
  request_cancel: { from: ['running'], to: 'running' },
  // The watchdog's move, never a caller's.
  time_out: { from: ['running'], to: 'failed' },
  // The orchestrator's: an instance that never came up, a lost one, a runner gone silent; before or
  // after start.
  conclude_failed: { from: ['pending', 'running'], to: 'failed' },
};

export const RunStateSchema = OneOf(RUN_STATES);

/** A managed run's priority in the compute queue: higher goes first; equal priorities take turns by user. */
export const RunPriority = Type.Integer({
  minimum: -100,
  maximum: 100,
  description: 'higher first in the compute queue; equal priorities take turns by user (default 0)',
});

/**
 * Where a managed run waits for `local` capacity (a run slot, and the GPUs its launch block asks for):
 * `position` 1 starts next.
 */
export const RunQueuePlace = Type.Object(
  {
    position: Type.Integer({ minimum: 1 }),
    waiting: Type.Integer({ minimum: 1, description: 'runs waiting in the queue, this one included' }),
    gpus: Type.Integer({ minimum: 0, description: 'GPUs the run waits for' }),
    since: Timestamp,
  },
  { title: 'RunQueuePlace' },
);
export type RunQueuePlace = Static<typeof RunQueuePlace>;
export const RunNumber = PositiveInt32;

/** A run's name: optional, free text. */
export const RunName = Type.String({ minLength: 1, maxLength: 200 });
/** A run's notes: markdown, rendered as text styles only (never as markup). */
export const RunNotes = Type.String({ maxLength: 20_000 });

export const Run = Type.Object(
  {
    id: Uuid,
    experiment_id: Uuid,
    n: Type.Integer(),
    r: Type.Integer(),
    state: RunStateSchema,
    failure_reason: Nullable(OneOf(FAILURE_REASONS)),
    failure_message: Nullable(Type.String()),
    environment: Nullable(JsonObject),
    config_read_at: NullableTimestamp,
    started_at: NullableTimestamp,
    last_heartbeat_at: NullableTimestamp,
    ended_at: NullableTimestamp,
    managed: Type.Boolean(),
    instance: Nullable(JsonObject),
    workflow_id: Nullable(Type.String()),
    workflow_url: Nullable(
      Type.String({ description: "the run's workflow in the Temporal UI, when the server knows one" }),
    ),
    recovers_run_id: Nullable(Uuid),
    cancel_requested: Type.Boolean(),
    cancel_reason: Nullable(OneOf(CANCEL_REASONS)),
    /** Set on a sweep's repeat runs: the seed the run's config carries (`seed:` at its top level). */
    seed: Nullable(Type.Integer()),
    /** The sweep run this one retries (a new run of the same variation after a retryable failure). */
    retries_run_id: Nullable(Uuid),
    /** A managed run's priority in the compute queue (0 unless provisioned or swept with one). */
    priority: Type.Integer(),
    /** Set while a managed run waits for `local` capacity; null otherwise. */
    queue: Nullable(RunQueuePlace),
    /** What a person calls the run; null unless given. */
    name: Nullable(RunName),
    tags: Tags,
    notes: RunNotes,
    /** Set when the run was archived: hidden from lists and compare unless asked for, kept. */
    archived_at: NullableTimestamp,
    /**
     * The run whose checkpoints this one resumes from (`assay run --resume-from`), chosen at create; a recovery
     * run resumes from the run it recovers (`recovers_run_id`). Null: the run starts from scratch.
     */
    resumes_from_run_id: Nullable(Uuid),
    created_at: Timestamp,
  },
  { $id: 'Run' },
);
export type Run = Static<typeof Run>;

export const RunList = ItemList(Run);

/** A run of the same experiment to resume from: its variation (default: the new run's) and run number. */
export const ResumeFrom = Type.Object(
  { n: Type.Optional(PositiveInt32), r: PositiveInt32 },
  { additionalProperties: false },
);
export type ResumeFrom = Static<typeof ResumeFrom>;

/** POST …/runs's optional body: how the run is labelled, and the run it resumes from. */
export const CreateRunBody = Type.Optional(
  Type.Object(
    {
      name: Type.Optional(RunName),
      tags: Type.Optional(Tags),
      notes: Type.Optional(RunNotes),
      resume_from: Type.Optional(ResumeFrom),
    },
    { additionalProperties: false },
  ),
);
export type CreateRunBody = Static<typeof CreateRunBody>;

/** PATCH …/runs/{r}: relabel a run or archive it (`archived`); people's keys only, never a worker key. */
export const UpdateRunBody = Type.Object(
  {
    name: Type.Optional(Nullable(RunName)),
    tags: Type.Optional(Tags),
    notes: Type.Optional(RunNotes),
    archived: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false, minProperties: 1 },
);
export type UpdateRunBody = Static<typeof UpdateRunBody>;

/**
 * Which runs a list answers: by state, by tag (every tag given, comma-separated), archived ones only when
 * asked (`archived=true` adds them).
 */
export const RunFilterQuery = {
  state: Type.Optional(RunStateSchema),
  tag: Type.Optional(
    Type.String({
      // Percent-encoded UTF-8 is up to 12 bytes a character: within the 16 KiB of a request's head.
      maxLength: 800,
      description: 'comma-separated; a run has every one',
    }),
  ),
  archived: Type.Optional(Type.Boolean({ default: false, description: 'include archived runs' })),
};
export const ListRunsQuery = Type.Object(RunFilterQuery, { additionalProperties: false });
export type ListRunsQuery = Static<typeof ListRunsQuery>;

/** GET /experiments/{id}/runs: every variation's runs, newest first, filtered as a variation's list is. */
export const ListExperimentRunsQuery = Type.Object(
  { ...RunFilterQuery, ...PageQuery },
  { additionalProperties: false },
);
export type ListExperimentRunsQuery = Static<typeof ListExperimentRunsQuery>;
export const RunPage = Page(Run);

/** What the runner reads before it starts: the variation's three blocks. */
export const RunConfig = Type.Object({
  experiment_id: Uuid,
  n: Type.Integer(),
  r: Type.Integer(),
  config_json: JsonObject,
  accelerate_config_json: JsonObject,
  launch_config: LaunchConfig,
  config_read_at: Timestamp,
});
export type RunConfig = Static<typeof RunConfig>;

export const StartRunBody = Type.Optional(
  Type.Object({ environment: Type.Optional(JsonObject) }, { additionalProperties: false }),
);

export const FailRunBody = Type.Object(
  {
    reason: OneOf(RUNNER_FAILURE_REASONS),
    message: Type.Optional(Type.String({ maxLength: 10_000 })),
  },
  { additionalProperties: false },
);
export type FailRunBody = Static<typeof FailRunBody>;

/** The heartbeat's answer: whether the runner should stop. */
export const RunHeartbeat = Type.Object({
  state: Type.String(),
  cancel_requested: Type.Boolean(),
  cancel_reason: Type.Optional(Nullable(OneOf(CANCEL_REASONS))),
  last_heartbeat_at: NullableTimestamp,
});
export type RunHeartbeat = Static<typeof RunHeartbeat>;

/**
 * GET …/runs/{r}/control?wait_s=N: the runner's long-poll. Answers at once when the run is no longer running
 * or a cancel was asked, else when either happens, else after `wait_s` with the same shape.
 */
export const RunControlQuery = Type.Object({
  wait_s: Type.Optional(Type.Integer({ minimum: 0, maximum: 60, default: 25 })),
});
export const RunControl = Type.Object({
  state: RunStateSchema,
  cancel_requested: Type.Boolean(),
  cancel_reason: Nullable(OneOf(CANCEL_REASONS)),
});
export type RunControl = Static<typeof RunControl>;

/** POST …/runs/{r}/provision's optional body. */
export const ProvisionBody = Type.Optional(
  Type.Object({ priority: Type.Optional(RunPriority) }, { additionalProperties: false }),
);
export type ProvisionBody = Static<typeof ProvisionBody>;

/** What provisioning answers: the managed-run workflow (the same one on every repeat) and the run. */
export const Provisioned = Type.Object({
  workflow_id: Type.String(),
  workflow_url: Nullable(Type.String()),
  run: Run,
});
export type Provisioned = Static<typeof Provisioned>;

export const RunParams = Type.Object({ id: Uuid, n: VariationNumber, r: RunNumber });

/** A run as a caller addresses it in a body: its experiment, variation number and run number. */
export const RunAddress = Type.Object(
  { experiment_id: Uuid, n: PositiveInt32, r: PositiveInt32 },
  { additionalProperties: false },
);
export type RunAddress = Static<typeof RunAddress>;
