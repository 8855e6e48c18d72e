// One lint setup for the whole repo: typescript-eslint's type-aware rules, the import rules between the
// repo's parts (docs/architecture.md, "Packages and import rules"), and purity rules for workflows.
import { createNodeResolver, importX } from 'eslint-plugin-import-x';
import reactHooks from 'eslint-plugin-react-hooks';
import tseslint from 'typescript-eslint';

/**
 * The service's feature folders (`src/server/<folder>`), lowest first: a folder imports only folders of lower
 * layers, so no two folders can import each other. A new folder must be placed here
 * (test/unit/server-layers.test.ts says so).
 */
export const serverLayers = [
  ['db', 'http'],
  ['auth'],
  ['storage', 'organizations'],
  ['experiments'],
  ['variations'],
  ['runs'],
  ['api-keys', 'metrics', 'assets', 'logs'],
  ['orchestration', 'search'],
  ['sweeps', 'admin', 'web'],
];

/** The folders of src/server that may use the Temporal glue (`src/orchestrator`). */
const temporalFolders = ['orchestration', 'sweeps'];

const serverZones = serverLayers.flatMap((layer, i) =>
  layer.map((folder) => {
    const below = serverLayers.slice(0, i).flat();
    return {
      target: `./src/server/${folder}`,
      from: './src/server',
      // config.ts is the frozen configuration every folder is handed; the other top-level files wire them.
      except: [`./${folder}`, './config.ts', ...below.map((f) => `./${f}`)],
      message: `src/server/${folder} may import only ${below.join(', ') || 'no other folder'} of src/server (serverLayers in eslint.config.js).`,
    };
  }),
);

/** Which part of the repo may not import which; each zone is one rule of docs/architecture.md. */
export const importZones = [
  {
    target: './src/client',
    from: [
      './src/server',
      './src/cli',
      './src/compute',
      './src/orchestrator',
      './src/worker.ts',
      './activities',
      './workflows',
    ],
    message: 'The client is published on its own: it may import only itself and @assay/contract.',
  },
  {
    target: './src/contract',
    from: '.',
    except: ['./src/contract', './node_modules'],
    message: 'The contract depends on nothing in the repository.',
  },
  {
    target: './src/compute',
    from: [
      './src/server',
      './src/cli',
      './src/orchestrator',
      './src/worker.ts',
      './activities',
      './workflows',
    ],
    message:
      'Compute providers are a lower layer: the service and the orchestrator use them, not the reverse.',
  },
  {
    target: './src/settings',
    from: '.',
    except: ['./src/settings', './src/contract', './node_modules'],
    message: 'Settings are read by every component: they may import only @assay/contract.',
  },
  {
    target: './src/server',
    from: ['./src/cli', './src/client', './src/web', './src/worker.ts', './activities', './workflows'],
    message:
      'The service imports the contract, settings, compute and the orchestrator glue; the worker only through src/orchestrator.',
  },
  ...serverZones,
  {
    target: serverLayers
      .flat()
      .filter((f) => !temporalFolders.includes(f))
      .map((f) => `./src/server/${f}`),
    from: './src/orchestrator',
    message: `Only ${temporalFolders.join(' and ')} of src/server use the Temporal glue; runs tell orchestration through RunEvents.`,
  },
  {
    target: ['./src/cli', './src/compute', './src/worker.ts', './activities'],
    // A module in a folder of the client (core/, uploads/, …) is internal; tests and benchmarks may reach it.
    from: './src/client/*/**',
    message:
      'Outside src/client, import the client through its top-level modules (index.ts, transport.ts, …), not its internals.',
  },
  {
    target: './src/orchestrator',
    from: ['./src/server', './src/cli', './src/client'],
    message: 'The orchestrator glue is a lower layer than the service: the service passes in what it needs.',
  },
  {
    target: './src/web',
    from: '.',
    except: ['./src/web', './src/client', './src/contract', './node_modules'],
    message: 'The web UI talks to the service through the client library and the contract only.',
  },
  {
    target: './workflows',
    from: '.',
    except: ['./workflows', './src/contract', './activities', './node_modules'],
    message: 'Workflows reach the world only through activities (imported as types) and @assay/contract.',
  },
];

export default tseslint.config(
  // test/fixtures/lint/ holds deliberate violations that test/unit/lint-rules.test.ts lints on purpose.
  {
    ignores: [
      'node_modules/**',
      'dist/**',
      '.assay-data/**',
      '.venv/**',
      '.venv-sdk/**',
      '.venv-search/**',
      'test/fixtures/lint/**',
    ],
  },
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts', '**/*.tsx', '**/*.js'],
    plugins: { 'import-x': importX },
    settings: {
      // Without these, import-x reads no .ts module and so would never see a cycle through one.
      'import-x/extensions': ['.ts', '.tsx', '.js'],
      'import-x/parsers': { '@typescript-eslint/parser': ['.ts', '.tsx'] },
      'import-x/resolver-next': [createNodeResolver({ extensions: ['.ts', '.tsx', '.js'] })],
    },
    rules: {
      'import-x/no-restricted-paths': ['error', { zones: importZones, basePath: import.meta.dirname }],
      // Type-only imports erase at runtime and are allowed to go both ways; a lazy import() is still an edge.
      'import-x/no-cycle': ['error', { ignoreExternal: true }],
    },
  },
  {
    files: ['**/*.ts', '**/*.tsx'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': [
        'error',
        {
          allowForKnownSafeCalls: [
            {
              from: 'package',
              package: 'node:test',
              name: ['describe', 'it', 'test', 'suite', 'before', 'after', 'beforeEach', 'afterEach'],
            },
          ],
        },
      ],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    // The rules of hooks (and the React Compiler's checks of what a render may do) for the web UI's
    // components and the custom hooks beside them.
    files: ['src/web/**/*.ts', 'src/web/**/*.tsx'],
    ...reactHooks.configs.flat.recommended,
  },
  {
    files: ['src/web/**/*.ts', 'src/web/**/*.tsx'],
    ignores: ['src/web/ui/query-keys.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector: 'Property[key.name="queryKey"] > ArrayExpression',
          message: 'Build react-query keys with src/web/ui/query-keys.ts, so reads and invalidations agree.',
        },
      ],
      // The contract's index builds every TypeBox schema as it loads: the UI reads its types from there and its
      // values from the schema-free entries, so TypeBox stays out of the bundle.
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          paths: [
            {
              name: '@assay/contract',
              allowTypeImports: true,
              message:
                'Import values from @assay/contract/enums, /metric-values or /log-limits: the index loads TypeBox.',
            },
          ],
        },
      ],
    },
  },
  {
    // Tests read JSON answers whose shape is the very thing under test.
    files: ['test/**/*.ts', 'bench/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    files: ['workflows/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['node:*', 'fs', 'path', 'os', 'child_process', 'crypto', 'http', 'https', 'net'],
              message: 'Workflows must stay deterministic: no Node built-ins.',
            },
            {
              group: ['pg', '@electric-sql/*', '**/src/server/**', '**/src/client/**', '**/src/compute/**'],
              message: 'Workflows reach the world only through activities.',
            },
            {
              group: ['**/activities/**', '**/activities'],
              allowTypeImports: true,
              message: 'Workflows import activities as types only and call them through proxyActivities.',
            },
          ],
        },
      ],
    },
  },
);
