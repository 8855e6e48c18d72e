// `assay auth status`: the resolved client settings, the key masked, and where each value came from.
import {
  describeSource,
  inspectSettings,
  maskKey,
  YAML_KEYS as YAML_NAME,
  type SettingName,
} from '../client/config.ts';
import { ApiClient, type MeData } from '../client/index.ts';
import { errorLine, printJson, printTable } from './output.ts';

export interface StatusOptions {
  verify?: boolean;
  json?: boolean;
}

export async function authStatus(values: StatusOptions): Promise<number> {
  const { settings, sources, warnings } = inspectSettings();
  for (const w of warnings) process.stderr.write(`warning: ${w}\n`);
  const shown: Record<SettingName, unknown> = {
    serverUrl: settings.serverUrl,
    apiKey: settings.apiKey === undefined ? undefined : maskKey(settings.apiKey),
    timeout: settings.timeout,
    maxUploadWorkers: settings.maxUploadWorkers,
    organizationId: settings.organizationId,
    organizationSlug: settings.organizationSlug,
  };
  // The organization is one setting spelled two ways; the row shows whichever is set (the id row
  // when neither).
  const organization: SettingName =
    settings.organizationSlug !== undefined ? 'organizationSlug' : 'organizationId';
  const names: SettingName[] = ['serverUrl', 'apiKey', 'timeout', 'maxUploadWorkers', organization];
  let user: MeData | undefined;
  let failure: string | undefined;
  if (values.verify && settings.apiKey !== undefined) {
    try {
      const { me } = new ApiClient({
        serverUrl: settings.serverUrl,
        apiKey: settings.apiKey,
        timeout: settings.timeout,
      });
      user = await me.get();
    } catch (error) {
      failure = errorLine(error);
    }
  }
  if (values.json) {
    const entries = names.map((n) => [YAML_NAME[n], { value: shown[n] ?? null, source: sources[n] ?? null }]);
    printJson({
      settings: Object.fromEntries(entries),
      warnings,
      ...(values.verify ? { user: user ?? null, error: failure ?? null } : {}),
    });
  } else {
    printTable(names, [
      ['SETTING', (n) => YAML_NAME[n]],
      [
        'VALUE',
        (n) =>
          shown[n] ??
          (n === 'organizationId' ? '(none: personal scope or the server-side default)' : '(not set)'),
      ],
      ['SOURCE', (n) => (sources[n] ? describeSource(sources[n]) : '')],
    ]);
    if (user)
      process.stdout.write(
        `\nverified: ${user.email ?? user.id} (via ${user.auth.via}; scopes ${user.auth.scopes.join(' ')})\n`,
      );
  }
  if (settings.apiKey === undefined) {
    process.stderr.write('not logged in: run `assay auth login` or set SERVICE_API_KEY\n');
    return 2;
  }
  if (failure !== undefined) {
    process.stderr.write(`error: ${failure}\n`);
    return 1;
  }
  return 0;
}
