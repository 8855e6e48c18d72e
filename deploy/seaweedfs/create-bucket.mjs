// One-shot (create-bucket service, run with the assay image's Node and @aws-sdk/client-s3): creates the service's
// bucket in the S3 store, which the service itself never does. Retries while the store starts; a bucket that
// already exists counts as created; refused credentials fail at once. It then checks the bucket answers to these credentials, so a key mismatch
// fails here, before the service starts.
import { CreateBucketCommand, HeadBucketCommand, S3Client } from '@aws-sdk/client-s3';

const required = (name) => {
  const value = process.env[name]?.trim();
  if (!value) {
    console.error(`create-bucket: set ${name}`);
    process.exit(2);
  }
  return value;
};

const bucket = required('S3_BUCKET');
const endpoint = required('S3_ENDPOINT');
const client = new S3Client({
  endpoint,
  region: process.env.S3_REGION?.trim() || 'us-east-1',
  forcePathStyle: true,
  credentials: {
    accessKeyId: required('S3_ACCESS_KEY_ID'),
    secretAccessKey: required('S3_SECRET_ACCESS_KEY'),
  },
  maxAttempts: 1,
});

// The store answers these when it is up but refuses the keys: waiting cannot help.
const REFUSED = new Set(['InvalidAccessKeyId', 'SignatureDoesNotMatch', 'AccessDenied']);
const deadline = Date.now() + 180_000;
for (;;) {
  try {
    await client.send(new CreateBucketCommand({ Bucket: bucket }), {
      abortSignal: AbortSignal.timeout(10_000),
    });
    console.log(`create-bucket: created ${bucket} at ${endpoint}`);
    break;
  } catch (error) {
    if (error?.name === 'BucketAlreadyOwnedByYou' || error?.name === 'BucketAlreadyExists') {
      console.log(`create-bucket: ${bucket} exists at ${endpoint}`);
      break;
    }
    if (REFUSED.has(error?.name) || Date.now() > deadline) {
      console.error(`create-bucket: giving up on ${bucket} at ${endpoint}:`, error);
      process.exit(1);
    }
    console.log(`create-bucket: ${endpoint} not ready (${error?.code ?? error?.name ?? error}); retrying`);
    await new Promise((resolve) => setTimeout(resolve, 2_000));
  }
}

await client.send(new HeadBucketCommand({ Bucket: bucket }));
client.destroy();
