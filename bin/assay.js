#!/usr/bin/env node
// The CLI entry point. The sources are TypeScript that Node 24 runs directly (type stripping).
import '../src/cli/main.ts';
