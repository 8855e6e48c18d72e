// Types of node-version.js, which stays plain JavaScript so that old Nodes can parse it.
export function requiredNode(): string;
export function nodeVersionProblem(version: string): string | undefined;
export function satisfiesRange(version: string, range: string): boolean;
