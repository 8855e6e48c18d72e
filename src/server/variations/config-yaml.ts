import { isMap, isScalar, LineCounter, parseDocument, visit, type Document, type Scalar } from 'yaml';
import type { LaunchConfig } from '@assay/contract';
import { badRequest } from '../http/errors.ts';
import { assertExpandedSize } from './expanded-size.ts';
import { assertLaunchConfig } from './launch-validation.ts';

export interface SplitConfig {
  config_json: Record<string, unknown>;
  accelerate_config_json: Record<string, unknown>;
  launch_config: LaunchConfig;
}

/**
 * Parses a variation's `config_yaml` and splits it: the top-level `accelerate:` block, the `launch:` block
 * and the rest. Errors name line and column, and values JSON cannot hold (.inf, .nan) are refused rather than
 * lost. A config whose JSON would pass `maxBytes` once its aliases are expanded is refused (413)
 * before expanding.
 */
export function splitConfigYaml(text: string, maxBytes: number, field = 'config_yaml'): SplitConfig {
  return splitConfig(parseConfigYaml(text, maxBytes, field), field);
}

/**
 * The YAML as one JSON-compatible mapping, checked as splitConfigYaml checks it; `field` names the input
 * in errors.
 */
export function parseConfigYaml(
  text: string,
  maxBytes: number,
  field = 'config_yaml',
): Record<string, unknown> {
  // The library's own uniqueKeys check compares each key with every earlier one: minutes for a 1 MB mapping.
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { prettyErrors: true, uniqueKeys: false, lineCounter });
  const error = doc.errors[0];
  if (error) {
    const [line, column] = error.linePos?.[0]
      ? [error.linePos[0].line, error.linePos[0].col]
      : [undefined, undefined];
    throw badRequest(
      'invalid_yaml',
      `${field}${line ? ` line ${line}, column ${column}` : ''}: ${error.message.split('\n')[0]!.replace(/ at line \d+, column \d+:?\s*$/, '')}`,
      { line, column },
    );
  }
  const duplicate = firstDuplicateKey(doc);
  if (duplicate) {
    const { line, col: column } = lineCounter.linePos(duplicate.range?.[0] ?? 0);
    throw badRequest(
      'invalid_yaml',
      `${field} line ${line}, column ${column}: Map keys must be unique (${JSON.stringify(String(duplicate.value))} appears twice)`,
      { line, column },
    );
  }
  if (doc.contents !== null && !isMap(doc.contents)) {
    throw badRequest('invalid_config', `${field} must be a mapping of keys to values at the top level`, {
      line: 1,
      column: 1,
    });
  }
  assertExpandedSize(doc, maxBytes, field);
  let value: unknown;
  try {
    value = doc.toJS({ maxAliasCount: 100 }) ?? {};
  } catch (e) {
    throw badRequest('invalid_yaml', `${field}: ${(e as Error).message}`);
  }
  assertJsonCompatible(value, '', field);
  return value as Record<string, unknown>;
}

function splitConfig(value: Record<string, unknown>, field: string): SplitConfig {
  const { accelerate, launch, ...rest } = value;
  return {
    config_json: rest,
    accelerate_config_json: asBlock(accelerate, 'accelerate', field),
    launch_config: assertLaunchConfig(asBlock(launch, 'launch', field), field),
  };
}

/**
 * Keys that would collide once the config is JSON (so `1` and `"1"` count as the same key); one Set
 * per mapping.
 */
function firstDuplicateKey(doc: Document): Scalar | undefined {
  let duplicate: Scalar | undefined;
  visit(doc, {
    Map(_, map) {
      const seen = new Set<string>();
      for (const { key } of map.items) {
        if (!isScalar(key)) continue;
        const name = String(key.value);
        if (seen.has(name)) {
          duplicate = key;
          return visit.BREAK;
        }
        seen.add(name);
      }
      return undefined;
    },
  });
  return duplicate;
}

function asBlock(value: unknown, key: string, field: string): Record<string, unknown> {
  if (value === undefined || value === null) return {};
  if (typeof value !== 'object' || Array.isArray(value))
    throw badRequest('invalid_config', `${field}: the top-level \`${key}:\` block must be a mapping`);
  return value as Record<string, unknown>;
}

function assertJsonCompatible(value: unknown, path: string, field: string): void {
  if (typeof value === 'number' && !Number.isFinite(value)) {
    throw badRequest(
      'invalid_config',
      `${field}: ${path || 'value'} is ${value}, which JSON cannot represent`,
    );
  }
  if (typeof value === 'string' && value.includes('\u0000'))
    throw badRequest('invalid_config', `${field}: ${path || 'value'} contains a NUL character`);
  if (value instanceof Map || value instanceof Set || ArrayBuffer.isView(value) || value instanceof Date)
    throw badRequest('invalid_config', `${field}: ${path || 'value'} uses a YAML type JSON cannot represent`);
  if (Array.isArray(value)) value.forEach((v, i) => assertJsonCompatible(v, `${path}[${i}]`, field));
  else if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      if (k.includes('\u0000'))
        throw badRequest('invalid_config', `${field}: a key contains a NUL character`);
      assertJsonCompatible(v, path ? `${path}.${k}` : k, field);
    }
  }
}
