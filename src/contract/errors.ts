import { Type, type Static } from 'typebox';

/**
 * Every `error.code` the service's own rules answer, stable across versions so callers can branch on them.
 * Fastify's refusals before any handler add a few more (`malformed_body`, `media_type`-like
 * snake_case names).
 */
export const ERROR_CODES = [
  // Input
  'validation_failed',
  'invalid_parameter',
  'malformed_body',
  'invalid_value',
  'too_deeply_nested',
  'invalid_yaml',
  'invalid_config',
  'invalid_cursor',
  'invalid_scopes',
  'invalid_sweep',
  'sweep_too_large',
  'invalid_search_space',
  'config_too_large',
  'content_required',
  'components_required',
  'invalid_part_checksums',
  'duplicate_component',
  'inline_too_large',
  'link_mismatch',
  'run_required',
  'unknown_component',
  'unknown_parent',
  'resume_from_not_found',
  'size_mismatch',
  'invalid_key',
  'invalid_argument',
  // Credentials and permissions
  'unauthenticated',
  'insufficient_scope',
  'too_many_auth_failures',
  'scope_escalation',
  'key_outside_lineage',
  'worker_key_restricted',
  'exchange_token_required',
  'orchestrator_key_restricted',
  'not_organization_owner',
  'run_not_allowed',
  'launch_not_allowed',
  'signature_invalid',
  'url_expired',
  // Missing
  'not_found',
  'route_not_found',
  'upload_not_found',
  'incomplete_upload',
  'checksum_mismatch',
  // Wrong moves and clashes
  'invalid_state_transition',
  'config_not_read',
  'experiment_not_draft',
  'experiment_has_children',
  'experiment_not_committed',
  'experiment_not_runnable',
  'variations_frozen',
  'no_variations',
  'run_ended',
  'run_not_started',
  'metric_key_limit',
  'run_not_provisioned',
  'incomplete_run',
  'asset_ready',
  'asset_not_ready',
  'ambiguous_asset',
  'component_missing',
  'component_incomplete',
  'component_size_mismatch',
  'component_checksum_mismatch',
  'component_checksum_missing',
  'checksum_conflict',
  'already_member',
  'email_taken',
  'slug_taken',
  'range_not_satisfiable',
  // The service or one of its dependencies
  'orchestrator_unavailable',
  'sampler_unavailable',
  'search_unavailable',
  'database_unavailable',
  'storage_unavailable',
  'web_ui_not_built',
  'internal_error',
] as const;
export type ErrorCode = (typeof ERROR_CODES)[number];

/** The body of every non-2xx answer. */
export const ErrorResponse = Type.Object({
  error: Type.Object({
    code: Type.String({ description: 'stable snake_case code' }),
    message: Type.String(),
    details: Type.Optional(Type.Unknown()),
  }),
});
export type ErrorResponse = Static<typeof ErrorResponse>;
