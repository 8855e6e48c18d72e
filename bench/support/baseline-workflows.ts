// The yardstick of a step's cost: a workflow of six regular activities that do nothing. The saga's own cost
// is reported against it, measured in the same run on the same dev server.
import { proxyActivities } from '@temporalio/workflow';

const { nothing } = proxyActivities<{ nothing(): Promise<void> }>({ startToCloseTimeout: '10s' });

export async function sixNoOps(): Promise<void> {
  for (let i = 0; i < 6; i++) await nothing();
}
