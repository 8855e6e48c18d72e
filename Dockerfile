# The Assay image: `assay server` (the default command) and `assay worker`, as docker-compose.yml runs them.
#   docker build -t assay:local .
#   docker run --rm assay:local admin orchestrator-key      # any `assay` command works the same way

# --- build: every dependency (TypeScript and the rest), then `npm run build` (dist/ plus the SQL migrations,
# dist/packages/: @assay/contract and @assay/client as JavaScript, dist/web/: the web UI, and dist/runner/: the
# bundle of `assay run` that the local provider's instances start) ---
FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
COPY src/contract/package.json ./src/contract/
COPY src/client/package.json ./src/client/
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json tsconfig.packages.json ./
COPY scripts/build-packages.ts scripts/build-web.ts scripts/build-runner.ts ./scripts/
COPY src ./src
COPY workflows ./workflows
COPY activities ./activities
RUN npm run build

# --- runtime: production dependencies and the built JavaScript only (dist/workflows is what the worker bundles) ---
FROM node:24-bookworm-slim AS runtime
ENV NODE_ENV=production \
    ASSAY_DATA_DIR=/var/lib/assay
WORKDIR /app
# ssh: the Slurm provider submits over it to a login node (ASSAY_SLURM_SSH).
RUN apt-get update && apt-get install -y --no-install-recommends openssh-client && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json ./
# The workspaces as built JavaScript, where npm links them from (node_modules/@assay/* → src/*): this image
# holds no TypeScript sources.
COPY --from=build /app/dist/packages/contract ./src/contract
COPY --from=build /app/dist/packages/client ./src/client
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
COPY --from=build /app/dist ./dist
COPY bin ./bin
# The data directory is only used by the embedded defaults (PGlite, local storage); it must be writable anyway.
RUN mkdir -p /var/lib/assay && chown node:node /var/lib/assay
# The `node` user (uid 1000) of the base image: nothing runs as root.
USER node
EXPOSE 8080
# bin/assay.js runs dist/ only when installed under node_modules (otherwise it runs src/*.ts, absent here), so
# the image starts the built CLI directly.
ENTRYPOINT ["node", "dist/src/cli/main.js"]
CMD ["server"]
