// The wire contract shared by the service, the client, the CLI, the workflows and the web UI.
export {};
