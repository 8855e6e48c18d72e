// Types of what eslint.config.js exports, for the tests that read its
// layering (test/unit/server-layers.test.ts).
export declare const serverLayers: string[][];
export declare const importZones: object[];
declare const config: object[];
export default config;
