import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AppError } from '../../../src/server/http/errors.ts';
import { splitConfigYaml } from '../../../src/server/variations/config-yaml.ts';

// The service's default body limit, which bounds a config's expanded size.
const split = (text: string) => splitConfigYaml(text, 2 * 1024 * 1024);

const refused = (text: string, code: string) =>
  assert.throws(
    () => split(text),
    (e: unknown) => e instanceof AppError && e.statusCode === 400 && e.code === code,
  );

describe('config_yaml splitting', () => {
  it('splits accelerate: and launch: out of the rest', () => {
    assert.deepEqual(split('lr: 1\naccelerate:\n  fp16: true\nlaunch:\n  command: run\n'), {
      config_json: { lr: 1 },
      accelerate_config_json: { fp16: true },
      launch_config: { command: 'run' },
    });
  });

  it('takes an empty document as empty objects', () => {
    assert.deepEqual(split(''), { config_json: {}, accelerate_config_json: {}, launch_config: {} });
  });

  it('names line and column of a syntax error', () => {
    assert.throws(
      () => split('a: 1\nb: [1, 2\n'),
      (e: unknown) =>
        e instanceof AppError &&
        /line \d+, column \d+/.test(e.message) &&
        (e.details as { line: number }).line >= 2,
    );
  });

  it('refuses what JSON cannot hold or what is not a mapping', () => {
    refused('- 1\n', 'invalid_config');
    refused('just a string', 'invalid_config');
    refused('x: .inf\n', 'invalid_config');
    refused('x: .nan\n', 'invalid_config');
    refused('x: !!binary aGk=\n', 'invalid_config');
    refused('launch: [1]\n', 'invalid_config');
    refused('a: 1\na: 2\n', 'invalid_yaml');
  });

  it('stops alias bombs instead of expanding them', () => {
    const bomb = ['a: &a ["x","x","x","x","x","x","x","x","x"]'];
    for (let i = 1; i < 12; i++)
      bomb.push(
        `${String.fromCharCode(97 + i)}: &${String.fromCharCode(97 + i)} [${Array(9)
          .fill(`*${String.fromCharCode(96 + i)}`)
          .join(',')}]`,
      );
    assert.throws(() => split(bomb.join('\n')), AppError);
  });
});
