/**
 * The built-in user behind every orchestrator key (migration 003 creates it). It holds only the `orchestrate`
 * scope, belongs to no organization and owns nothing, so its keys reach the /orchestrator/* endpoints and no
 * tenant data.
 */
export const ORCHESTRATOR_USER_ID = '00000000-0000-4000-8000-00000000a55a';
