/**
 * The malformed-input battery's shared shapes: every case is data (a name, a request, an expectation), built
 * from the service's own OpenAPI document so a new route is covered the day it lands.
 * test/server/malformed-input.test.ts sends the cases; docs/malformed-inputs.md is generated from
 * the answers.
 */

export type Schema = {
  type?: string;
  format?: string;
  properties?: Record<string, Schema>;
  required?: string[];
  anyOf?: Schema[];
  [k: string]: unknown;
};

export interface Operation {
  method: string;
  /** OpenAPI form: `/experiments/{id}/variations/{n}`. */
  path: string;
  label: string;
  pathParams: string[];
  queryParams: string[];
  body: Schema | undefined;
}

export interface Expect {
  /** Statuses accepted (default: any 4xx). */
  status?: number[];
  code?: string[];
  /** A 2xx is acceptable (a lenient but harmless reading, such as an unknown query parameter ignored). */
  allow2xx?: boolean;
  /** The error names where in config_yaml it is: `details.line` and `details.column`. */
  lineColumn?: boolean;
  /** A caller's unsafe `x-request-id` is not echoed back. */
  requestIdReplaced?: boolean;
  /** The path folds into the root (`/experiments/..` is `/`), which redirects here: the web UI. */
  redirect?: string;
}

export interface Case {
  group: string;
  /** What was sent, independent of the operation: the doc aggregates answers by this name. */
  name: string;
  op: string;
  /** Set where the doc shows a group as a matrix: rows by name, columns by this. */
  column?: string;
  method: string;
  url: string;
  rawBody?: string;
  headers?: Record<string, string>;
  /** `null`: no Authorization header; otherwise a full header value; undefined: the admin key. */
  authorization?: string | null;
  expect: Expect;
}

/** Real objects the battery aims at, so a malformed part is the only thing wrong with a request. */
export interface Targets {
  experimentId: string; // committed, with variation 1 and run 1 (its config read, still pending)
  draftId: string; // draft, with variation 1
  organizationId: string;
  otherUserId: string;
}

export const JSON_CT = { 'content-type': 'application/json' };
export const NOWHERE = 'f0000000-0000-4000-8000-000000000000';
/**
 * Every body schema forbids unknown properties, so this body stops a request at validation: nothing can
 * be written.
 */
export const SAFE_BODY = '{"__malformed_probe__":true}';
export const nest = (depth: number, open: string, close: string, leaf = '1') =>
  open.repeat(depth) + leaf + close.repeat(depth);

export function operationsOf(openapi: { paths: Record<string, Record<string, any>> }): Operation[] {
  const ops: Operation[] = [];
  for (const [path, methods] of Object.entries(openapi.paths)) {
    for (const [method, op] of Object.entries(methods)) {
      const params: { in: string; name: string }[] = op.parameters ?? [];
      ops.push({
        method: method.toUpperCase(),
        path,
        label: `${method.toUpperCase()} ${path}`,
        pathParams: params.filter((p) => p.in === 'path').map((p) => p.name),
        queryParams: params.filter((p) => p.in === 'query').map((p) => p.name),
        body: op.requestBody?.content?.['application/json']?.schema,
      });
    }
  }
  return ops;
}

export function baseValue(op: Operation, name: string, t: Targets): string {
  if (name === 'n' || name === 'r') return '1';
  if (op.path.startsWith('/experiments/')) return t.experimentId;
  if (op.path.startsWith('/organizations/')) return t.organizationId;
  return NOWHERE; // api keys and anything newer: a well-formed id naming nothing, so DELETE revokes nothing
}

export function urlOf(op: Operation, t: Targets, override: Record<string, string> = {}, query = ''): string {
  return op.path.replace(/\{(\w+)\}/g, (_, name: string) => override[name] ?? baseValue(op, name, t)) + query;
}

/**
 * Non-GET requests carry the safe body, so a path or query case never reaches a handler with a valid body.
 */
export function safe(op: Operation): Pick<Case, 'rawBody' | 'headers'> {
  return op.method === 'GET' || op.method === 'DELETE' || op.method === 'HEAD'
    ? {}
    : { rawBody: SAFE_BODY, headers: JSON_CT };
}
