// The production deployment files (docker-compose.yml, Dockerfile, .dockerignore, deploy/) checked without
// Docker: their structure, their pins, and that every setting they pass is one the code reads.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import ts from 'typescript';
import { parse } from 'yaml';
import { SETTINGS } from '../../src/settings/settings-schema.ts';

const root = path.resolve(import.meta.dirname, '../..');
const read = (file: string) => readFileSync(path.join(root, file), 'utf8');

const compose = parse(read('docker-compose.yml')) as {
  services: Record<string, any>;
  volumes?: Record<string, unknown>;
};
const services = compose.services;
const service = (name: string) => {
  assert.ok(services[name], `docker-compose.yml has no service ${name}`);
  return services[name];
};

/** A service's environment as a map, whichever of the two compose forms it uses. */
function environment(svc: any): Record<string, string> {
  const env = svc.environment ?? {};
  if (!Array.isArray(env))
    return Object.fromEntries(Object.entries(env).map(([k, v]) => [k, String(v ?? '')]));
  return Object.fromEntries(
    env.map((entry: string) => {
      const at = entry.indexOf('=');
      return at < 0 ? [entry, ''] : [entry.slice(0, at), entry.slice(at + 1)];
    }),
  );
}

const dependsOn = (svc: any): Record<string, { condition?: string }> =>
  Array.isArray(svc.depends_on)
    ? Object.fromEntries(svc.depends_on.map((n: string) => [n, {}]))
    : (svc.depends_on ?? {});
const asList = (value: unknown): string[] =>
  value === undefined ? [] : Array.isArray(value) ? value.map(String) : [String(value)];
const servicesByImage = (prefix: string) =>
  Object.entries(services).filter(([, svc]) => String(svc.image ?? '').startsWith(prefix));

/** Host files bind-mounted into a service (`./path:/target[:mode]`). */
const bindMounts = (svc: any): { source: string; target: string }[] =>
  (svc.volumes ?? [])
    .map((v: any) => (typeof v === 'string' ? v.split(':') : [v.source, v.target]))
    .filter(
      ([source]: string[]) =>
        typeof source === 'string' && (source.startsWith('./') || source.startsWith('../')),
    )
    .map(([source, target]: string[]) => ({ source, target }));

function mountedFile(svc: any, targetSuffix: string): string {
  const mount = bindMounts(svc).find((m) => m.target.endsWith(targetSuffix));
  assert.ok(mount, `no file mounted at …${targetSuffix}`);
  return read(mount.source);
}

describe('docker-compose.yml', () => {
  test('has every service of a production deployment', () => {
    for (const name of [
      'postgres',
      'temporal-schema',
      'temporal',
      'temporal-create-namespace',
      'temporal-ui',
      'seaweedfs',
      'create-bucket',
      'assay',
      'worker',
    ]) {
      service(name);
    }
    assert.match(service('postgres').image, /^postgres:16(\.|$)/);
    assert.match(service('seaweedfs').image, /^chrislusf\/seaweedfs:/);
    assert.match(service('temporal').image, /^temporalio\/server:/);
    assert.match(service('temporal-schema').image, /^temporalio\/admin-tools:/);
    assert.match(service('temporal-create-namespace').image, /^temporalio\/admin-tools:/);
    assert.match(service('temporal-ui').image, /^temporalio\/ui:/);
  });

  test('uses no auto-setup image', () => {
    for (const [name, svc] of Object.entries(services)) {
      assert.doesNotMatch(
        String(svc.image ?? ''),
        /auto-setup/,
        `${name} uses the deprecated auto-setup image`,
      );
    }
  });

  test('pins every image to a tag that is not latest', () => {
    for (const [name, svc] of Object.entries(services)) {
      const image = String(svc.image ?? '');
      assert.ok(image, `${name} has no image`);
      const tag = /^[^@]+:([^:/@]+)$/.exec(image)?.[1];
      assert.ok(tag, `${name}: ${image} has no tag`);
      assert.notEqual(tag, 'latest', `${name}: ${image} is not pinned`);
      if (!svc.build)
        assert.doesNotMatch(image, /\$/, `${name}: ${image} takes its tag from the environment`);
    }
    // Server and admin-tools move together: the schema job applies the schema of its own version.
    const temporalTags = new Set(
      [...servicesByImage('temporalio/server:'), ...servicesByImage('temporalio/admin-tools:')].map(
        ([, svc]) => svc.image.split(':')[1],
      ),
    );
    assert.equal(
      temporalTags.size,
      1,
      `temporalio/server and temporalio/admin-tools differ: ${[...temporalTags].join(', ')}`,
    );
  });

  test('postgres keeps its data in a volume and reports health with pg_isready', () => {
    const pg = service('postgres');
    assert.ok(
      (pg.volumes as unknown[]).some(
        (v) => typeof v === 'string' && /^[\w-]+:\/var\/lib\/postgresql\/data$/.test(v),
      ),
      'no data volume',
    );
    assert.ok(compose.volumes && Object.hasOwn(compose.volumes, 'postgres-data'));
    assert.match(asList(pg.healthcheck?.test).join(' '), /pg_isready/);
    const init = mountedFile(pg, '.sh');
    assert.match(init, /CREATE DATABASE assay\b/);
    assert.match(init, /CREATE ROLE temporal LOGIN CREATEDB\b/);
  });

  test('the temporal server waits for the schema job, which sets up both stores with temporal-sql-tool', () => {
    const schemaJob = servicesByImage('temporalio/admin-tools:').find(([, svc]) =>
      /setup-schema/.test(asList(svc.entrypoint).join(' ')),
    );
    assert.ok(schemaJob, 'no admin-tools service runs the schema setup');
    const [jobName, job] = schemaJob;
    assert.equal(dependsOn(service('temporal'))[jobName]?.condition, 'service_completed_successfully');
    assert.equal(dependsOn(job).postgres?.condition, 'service_healthy');
    const script = mountedFile(job, 'setup-schema.sh');
    for (const step of ['create', 'setup-schema -v 0.0', 'update-schema -d'])
      assert.ok(script.includes(`temporal-sql-tool --db "$db" ${step}`), `no ${step}`);
    assert.match(script, /\/etc\/temporal\/schema\/postgresql\/v12/);
    assert.match(script, /\$schema\/temporal\/versioned/);
    assert.match(script, /\$schema\/visibility\/versioned/);
    assert.equal(environment(job).SQL_PLUGIN, 'postgres12');
  });

  test('the temporal server is configured for PostgreSQL through its config template variables', () => {
    const env = environment(service('temporal'));
    assert.equal(env.DB, 'postgres12');
    assert.equal(env.POSTGRES_SEEDS, 'postgres');
    for (const name of [
      'DB_PORT',
      'POSTGRES_USER',
      'POSTGRES_PWD',
      'DBNAME',
      'VISIBILITY_DBNAME',
      'BIND_ON_IP',
      'DYNAMIC_CONFIG_FILE_PATH',
    ]) {
      assert.ok(env[name], `temporal lacks ${name}`);
    }
    assert.ok(
      bindMounts(service('temporal')).some((m) => m.target === env.DYNAMIC_CONFIG_FILE_PATH),
      'the dynamic config file is not mounted where it is read',
    );
  });

  test('the namespace job runs after the server is healthy and creates the namespace only when missing', () => {
    const job = service('temporal-create-namespace');
    assert.equal(dependsOn(job).temporal?.condition, 'service_healthy');
    assert.ok(service('temporal').healthcheck, 'temporal has no healthcheck');
    const script = mountedFile(job, 'create-namespace.sh');
    assert.match(script, /temporal operator namespace describe/);
    assert.match(script, /temporal operator namespace create/);
    for (const name of ['assay', 'worker']) {
      assert.equal(
        dependsOn(service(name))['temporal-create-namespace']?.condition,
        'service_completed_successfully',
        name,
      );
    }
  });

  test('the Temporal UI listens on 8233 and talks to the frontend', () => {
    const ui = service('temporal-ui');
    assert.ok(
      asList(ui.ports).some((p) => /(^|:)8233:8080$/.test(p)),
      `ports ${asList(ui.ports).join(', ')}`,
    );
    assert.equal(environment(ui).TEMPORAL_ADDRESS, 'temporal:7233');
  });

  test('seaweedfs serves S3 with keys from the environment, and the bucket job creates the bucket first', () => {
    const weed = service('seaweedfs');
    assert.ok(
      (weed.volumes as unknown[]).some((v) => typeof v === 'string' && /^[\w-]+:\/data$/.test(v)),
      'no data volume',
    );
    const start = mountedFile(weed, 'start.sh');
    assert.match(start, /server\b[\s\S]*-s3\b/);
    assert.match(start, /-s3\.config=/);
    assert.match(start, /\$S3_ACCESS_KEY_ID/);
    const bucketJob = service('create-bucket');
    assert.equal(dependsOn(bucketJob).seaweedfs?.condition, 'service_healthy');
    assert.equal(dependsOn(service('assay'))['create-bucket']?.condition, 'service_completed_successfully');
    assert.match(mountedFile(bucketJob, 'create-bucket.mjs'), /CreateBucketCommand/);
    for (const name of ['S3_ACCESS_KEY_ID', 'S3_SECRET_ACCESS_KEY', 'S3_BUCKET']) {
      assert.equal(
        environment(bucketJob)[name],
        environment(service('assay'))[name],
        `${name} differs between create-bucket and assay`,
      );
    }
    assert.equal(environment(weed).S3_SECRET_ACCESS_KEY, environment(service('assay')).S3_SECRET_ACCESS_KEY);
  });

  test('assay and worker run the image built from the Dockerfile, as `server` and `worker`', () => {
    const assay = service('assay');
    const worker = service('worker');
    for (const svc of [assay, worker]) {
      const context = typeof svc.build === 'string' ? svc.build : svc.build?.context;
      assert.equal(context, '.');
      assert.ok(
        typeof svc.build === 'string' ||
          svc.build.dockerfile === undefined ||
          svc.build.dockerfile === 'Dockerfile',
      );
    }
    assert.equal(assay.image, worker.image);
    assert.deepEqual(asList(assay.command), ['server']);
    assert.deepEqual(asList(worker.command), ['worker']);
    assert.match(asList(assay.healthcheck?.test).join(' '), /\/readyz/);
    assert.equal(dependsOn(worker).assay?.condition, 'service_healthy');
    assert.ok(worker.deploy && 'replicas' in worker.deploy, 'worker has no deploy.replicas');
  });

  test('assay and worker get the settings of a split service and worker deployment', () => {
    const assay = environment(service('assay'));
    assert.equal(assay.ASSAY_HOST, '0.0.0.0');
    assert.equal(assay.PORT, '8080');
    assert.match(
      assay.DATABASE_URL,
      /^postgres:\/\/assay:\$\{ASSAY_DB_PASSWORD:\?[^}]*\}@postgres:5432\/assay$/,
    );
    assert.equal(assay.ASSAY_STORAGE, 's3');
    assert.equal(assay.TEMPORAL_ADDRESS, 'temporal:7233');
    assert.equal(assay.TEMPORAL_NAMESPACE, 'default');
    assert.equal(assay.ASSAY_WORKER, 'off');
    assert.match(assay.ASSAY_ORCHESTRATOR_KEY, /^\$\{ASSAY_ORCHESTRATOR_KEY:\?/);
    const worker = environment(service('worker'));
    assert.equal(worker.ASSAY_COMPUTE, '${ASSAY_COMPUTE:-ec2}');
    assert.equal(
      assay.ASSAY_COMPUTE,
      worker.ASSAY_COMPUTE,
      'the service checks launch blocks for the workers’ provider',
    );
    assert.equal(worker.ASSAY_SERVICE_URL, 'http://assay:8080');
    assert.equal(
      worker.ASSAY_TASK_QUEUE,
      assay.ASSAY_TASK_QUEUE,
      'the service starts workflows on the queue the workers poll',
    );
    assert.equal(worker.TEMPORAL_NAMESPACE, assay.TEMPORAL_NAMESPACE);
    assert.equal(worker.ASSAY_ORCHESTRATOR_KEY, assay.ASSAY_ORCHESTRATOR_KEY);
    const ec2Names = Object.entries(SETTINGS)
      .filter(([, setting]) => (setting.readBy as readonly string[]).includes('compute'))
      .map(([name]) => name);
    assert.ok(ec2Names.length >= 7);
    for (const name of ec2Names) assert.ok(name in worker, `worker does not pass ${name} through`);
  });

  test('every ASSAY_/TEMPORAL_/S3_/EC2_ variable and DATABASE_URL given to assay or worker is read somewhere in src/', () => {
    const sources = readdirSync(path.join(root, 'src'), { recursive: true, encoding: 'utf8' })
      .filter((file) => file.endsWith('.ts'))
      .map((file) => readFileSync(path.join(root, 'src', file), 'utf8'))
      .join('\n');
    const unknown: string[] = [];
    for (const name of ['assay', 'worker']) {
      for (const variable of Object.keys(environment(service(name)))) {
        if (!/^(ASSAY_|TEMPORAL_|S3_|EC2_)|^(DATABASE_URL|PORT)$/.test(variable)) continue;
        if (!new RegExp(`(?<![A-Z0-9_])${variable}(?![A-Z0-9_])`).test(sources))
          unknown.push(`${name}: ${variable}`);
      }
    }
    assert.deepEqual(unknown, [], 'set in docker-compose.yml but named nowhere in src/');
  });

  test('holds no secret literal: secrets come from .env and must be set there', () => {
    for (const [name, svc] of Object.entries(services)) {
      for (const [variable, value] of Object.entries(environment(svc))) {
        if (!/(PASSWORD|PWD|SECRET|_KEY|_KEY_ID|_TOKEN)$/.test(variable)) continue;
        // The whole value is one interpolation: required (:?) or, for optional AWS keys, empty by default.
        assert.match(
          value,
          /^\$\{([A-Z0-9_]+)(:\?[^}]*|:-)?\}$/,
          `${name}.${variable} is not taken from the environment`,
        );
      }
      const url = environment(svc).DATABASE_URL;
      if (url)
        assert.doesNotMatch(
          url.replace(/\$\{[^}]*\}/g, ''),
          /:[^/@:]+@/,
          `${name}: DATABASE_URL holds a literal password`,
        );
    }
  });

  test('every host file it mounts exists, and deploy/.env.example names every variable it requires', () => {
    for (const [name, svc] of Object.entries(services)) {
      for (const { source } of bindMounts(svc))
        assert.ok(existsSync(path.join(root, source)), `${name} mounts missing ${source}`);
    }
    const example = read('deploy/.env.example');
    const required = new Set(
      [...read('docker-compose.yml').matchAll(/\$\{([A-Z0-9_]+):\?/g)].map((m) => m[1]),
    );
    for (const variable of required)
      assert.match(example, new RegExp(`^${variable}=`, 'm'), `deploy/.env.example lacks ${variable}`);
  });
});

describe('docker-compose.yml exposure and operations', () => {
  const LOOPBACK = /^(127\.0\.0\.1|\$\{[A-Z0-9_]+:-127\.0\.0\.1\}):/;

  test('publishes plain HTTP on loopback only: every other published port is the TLS proxy', () => {
    const proxies = Object.entries(services)
      .filter(([, svc]) => String(svc.image ?? '').startsWith('caddy:'))
      .map(([name]) => name);
    assert.deepEqual(proxies, ['proxy']);
    for (const [name, svc] of Object.entries(services)) {
      if (name === 'proxy') continue;
      for (const port of asList(svc.ports))
        assert.match(port, LOOPBACK, `${name} publishes ${port} beyond 127.0.0.1 without TLS`);
    }
    assert.ok(
      asList(service('assay').ports).some((p) => /:8080$/.test(p)),
      'the service is reachable on the host',
    );
    assert.deepEqual(asList(service('seaweedfs').ports), [], 'the store is reached through the proxy');
    assert.deepEqual(asList(service('proxy').ports).sort(), ['443:443', '80:80', '8333:8333']);
  });

  test('the proxy terminates TLS for ASSAY_DOMAIN in front of the service and the store', () => {
    const proxy = service('proxy');
    assert.match(environment(proxy).ASSAY_DOMAIN, /^\$\{ASSAY_DOMAIN:\?/);
    const caddyfile = mountedFile(proxy, '/etc/caddy/Caddyfile');
    assert.match(caddyfile, /^\{\$ASSAY_DOMAIN\} \{\s*reverse_proxy assay:8080\s*\}/m);
    assert.match(caddyfile, /^\{\$ASSAY_DOMAIN\}:8333 \{\s*reverse_proxy seaweedfs:8333\s*\}/m);
    // Caddy serves a site address without a scheme over HTTPS only.
    assert.doesNotMatch(caddyfile, /http:\/\/|tls off|auto_https off/);
    // Inside the network the domain names the proxy, so the service checks the store through it as well.
    assert.deepEqual(proxy.networks?.default?.aliases, [environment(proxy).ASSAY_DOMAIN]);
    const assay = environment(service('assay'));
    assert.equal(assay.S3_ENDPOINT, '${S3_ENDPOINT:-https://${ASSAY_DOMAIN}:8333}');
    assert.equal(assay.ASSAY_PUBLIC_URL, '${ASSAY_PUBLIC_URL:-https://${ASSAY_DOMAIN}}');
    assert.equal(
      environment(service('worker')).ASSAY_RUNNER_SERVER_URL,
      '${ASSAY_RUNNER_SERVER_URL:-https://${ASSAY_DOMAIN}}',
    );
  });

  test('every service rotates its logs', () => {
    for (const [name, svc] of Object.entries(services)) {
      assert.equal(svc.logging?.driver, 'json-file', `${name} keeps its logs unrotated`);
      assert.match(String(svc.logging.options?.['max-size']), /^\d+[kmg]$/, `${name}: max-size`);
      assert.match(String(svc.logging.options?.['max-file']), /^\d+$/, `${name}: max-file`);
    }
  });

  test('the service keeps its data directory, where the bootstrap admin key waits, in a volume', () => {
    const volumes = asList(service('assay').volumes);
    assert.ok(volumes.includes('assay-data:/var/lib/assay'), volumes.join(', '));
    assert.match(read('Dockerfile'), /ASSAY_DATA_DIR=\/var\/lib\/assay\b/);
  });

  test('passes every documented setting of the service through, so .env can set it', () => {
    // Fixed by the deployment itself, or meaningful only for the embedded default or the local backend.
    const fixed = new Set([
      'ASSAY_HOST',
      'PORT',
      'DATABASE_URL',
      'ASSAY_DATA_DIR',
      'ASSAY_STORAGE_DIR',
      'ASSAY_STORAGE_SECRET',
      'TEMPORAL_CLI_PATH',
      'ASSAY_TEMPORAL_PORT',
      'ASSAY_TEMPORAL_UI_PORT',
      'ASSAY_SEARCH_PYTHON',
    ]);
    // Settings of the workers, which get them instead.
    const workers = new Set([
      'ASSAY_COMPUTE',
      'ASSAY_SERVICE_URL',
      'ASSAY_RUNNER_SERVER_URL',
      'ASSAY_WORKER_MAX_ACTIVITIES',
      'ASSAY_WORKER_MAX_WORKFLOWS',
    ]);
    const assay = environment(service('assay'));
    const worker = environment(service('worker'));
    // The EC2 provider's own settings go to the workers and are checked above.
    const missing = Object.entries(SETTINGS)
      .filter(([, setting]) => setting.table !== 'compute')
      .map(([name]) => name)
      .filter((name) => !fixed.has(name) && !(name in (workers.has(name) ? worker : assay)));
    assert.deepEqual(missing, []);
  });
});

describe('secrets stay out of the repository', () => {
  test('.env, where docs/production.md puts the secrets, is ignored by git; the example is not', () => {
    const ignored = (file: string) => {
      try {
        execFileSync('git', ['check-ignore', '-q', file], { cwd: root });
        return true;
      } catch {
        return false;
      }
    };
    assert.match(read('docs/production.md'), /cp deploy\/\.env\.example \.env/);
    assert.ok(ignored('.env'), '.env is not git-ignored');
    assert.ok(ignored('.env.production'), '.env.production is not git-ignored');
    assert.ok(!ignored('deploy/.env.example'), 'deploy/.env.example is git-ignored');
  });

  test('deploy/.env.example leaves every value compose requires empty, so a copy cannot pass unfilled', () => {
    const example = read('deploy/.env.example');
    const required = new Set(
      [...read('docker-compose.yml').matchAll(/\$\{([A-Z0-9_]+):\?/g)].map((m) => m[1]!),
    );
    for (const variable of required)
      assert.match(example, new RegExp(`^${variable}=$`, 'm'), `deploy/.env.example fills in ${variable}`);
  });
});

describe('Dockerfile', () => {
  const dockerfile = read('Dockerfile');
  const instructions = dockerfile
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line && !line.startsWith('#'));
  const args = (line: string) => {
    const rest = line.replace(/^\S+\s+/, '');
    return rest.startsWith('[') ? (JSON.parse(rest) as string[]) : rest.split(/\s+/);
  };

  test('builds in one stage and runs production dependencies in another, from node:24-bookworm-slim', () => {
    const froms = instructions.filter((l) => /^FROM\s/i.test(l));
    assert.ok(froms.length >= 2, 'not multi-stage');
    for (const from of froms) assert.match(from, /^FROM node:24-bookworm-slim\b/);
    assert.match(dockerfile, /^RUN npm ci\b(?!.*--omit=dev)/m);
    assert.match(dockerfile, /^RUN npm run build\b/m);
    assert.match(dockerfile, /^RUN npm ci --omit=dev\b/m);
    assert.match(dockerfile, /^EXPOSE 8080$/m);
  });

  test('runs as a user that is not root', () => {
    const users = instructions.filter((l) => /^USER\s/i.test(l)).map((l) => args(l)[0]);
    assert.ok(users.length > 0, 'no USER');
    assert.ok(!['root', '0'].includes(users.at(-1)!.split(':')[0]), `runs as ${users.at(-1)}`);
  });

  test('copies only paths that exist and that .dockerignore lets through', () => {
    const ignored = read('.dockerignore')
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l && !l.startsWith('#'));
    const copies = instructions.filter((l) => /^COPY\s/i.test(l) && !/--from=/.test(l));
    assert.ok(copies.length > 0);
    for (const copy of copies) {
      const sources = args(copy)
        .filter((a) => !a.startsWith('--'))
        .slice(0, -1);
      for (const source of sources) {
        assert.ok(existsSync(path.join(root, source)), `COPY ${source}: no such path in the repository`);
        assert.ok(
          !ignored.includes(source.replace(/\/$/, '').split('/')[0]),
          `COPY ${source}: excluded by .dockerignore`,
        );
      }
    }
    for (const entry of ['node_modules', '.venv', '.assay-data', 'dist', '.git', '.env', 'test'])
      assert.ok(ignored.includes(entry), `.dockerignore lacks ${entry}`);
  });

  test('starts the built CLI, which `npm run build` emits from an existing source, with `server` by default', () => {
    const entrypoint = args(instructions.findLast((l) => /^ENTRYPOINT\s/i.test(l))!);
    assert.equal(entrypoint[0], 'node');
    assert.deepEqual(args(instructions.findLast((l) => /^CMD\s/i.test(l))!), ['server']);
    // dist/X.js comes from <rootDir>/X.ts under tsconfig.build.json's outDir and rootDir.
    const config = ts.readConfigFile(path.join(root, 'tsconfig.build.json'), ts.sys.readFile);
    assert.ok(!config.error);
    const { outDir, rootDir } = config.config.compilerOptions as { outDir: string; rootDir: string };
    const emitted = path.normalize(entrypoint[1]);
    assert.ok(
      emitted.startsWith(path.normalize(outDir) + path.sep),
      `${emitted} is not under outDir ${outDir}`,
    );
    const source = path.join(rootDir, path.relative(outDir, emitted)).replace(/\.js$/, '.ts');
    assert.ok(
      existsSync(path.join(root, source)),
      `the entrypoint ${emitted} would come from ${source}, which does not exist`,
    );
  });
});
