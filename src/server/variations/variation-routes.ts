import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { Ec2Config } from '../../compute/ec2-config.ts';
import type { Db } from '../db/database.ts';
import { JsonObject, ShortText, Timestamp, Uuid, withErrors } from '../http/schemas.ts';
import * as service from './variation-service.ts';

const tags = ['variations'];

export const Variation = Type.Object(
  {
    experiment_id: Uuid,
    n: Type.Integer({ minimum: 1 }),
    name: Type.String(),
    config_yaml: Type.String(),
    config_json: JsonObject,
    accelerate_config_json: JsonObject,
    launch_config: JsonObject,
    created_at: Timestamp,
  },
  { $id: 'Variation' },
);

export const VariationNumber = Type.Integer({ minimum: 1, maximum: 2_147_483_647 });
const ConfigYaml = Type.String({
  maxLength: 1_000_000,
  description: 'YAML: top-level `accelerate:` and `launch:` blocks are split out',
});
const ExperimentParams = Type.Object({ id: Uuid });
const VariationParams = Type.Object({ id: Uuid, n: VariationNumber });

/** `ec2`: the EC2 settings when managed runs go to EC2, whose allowlists bound the launch blocks. */
export function variationRoutes(db: Db, ec2: Ec2Config | undefined) {
  return async (base: FastifyInstance) => {
    const app = base.withTypeProvider<TypeBoxTypeProvider>();
    const read = { scope: 'experiments:read' as const };
    const write = { scope: 'experiments:write' as const };

    app.post(
      '/experiments/:id/variations',
      {
        config: write,
        schema: {
          tags,
          summary: 'Create a variation from config_yaml (draft experiments only)',
          params: ExperimentParams,
          body: Type.Object(
            { config_yaml: ConfigYaml, name: Type.Optional(ShortText()) },
            { additionalProperties: false },
          ),
          response: withErrors({ 201: Variation }, 409),
        },
      },
      async (req, reply) => {
        reply.code(201);
        return service.createVariation(db, req.principal, req.params.id, req.body, ec2);
      },
    );

    app.get(
      '/experiments/:id/variations',
      {
        config: read,
        schema: {
          tags,
          summary: 'List variations',
          params: ExperimentParams,
          response: withErrors({ 200: Type.Object({ items: Type.Array(Variation) }) }),
        },
      },
      (req) => service.listVariations(db, req.principal, req.params.id),
    );

    app.get(
      '/experiments/:id/variations/:n',
      {
        config: read,
        schema: {
          tags,
          summary: 'Get a variation',
          params: VariationParams,
          response: withErrors({ 200: Variation }),
        },
      },
      (req) => service.getVariation(db, req.principal, req.params.id, req.params.n),
    );

    app.patch(
      '/experiments/:id/variations/:n',
      {
        config: write,
        schema: {
          tags,
          summary: 'Edit a variation (draft experiments only)',
          params: VariationParams,
          body: Type.Object(
            { config_yaml: Type.Optional(ConfigYaml), name: Type.Optional(ShortText()) },
            { additionalProperties: false, minProperties: 1 },
          ),
          response: withErrors({ 200: Variation }, 409),
        },
      },
      (req) => service.editVariation(db, req.principal, req.params.id, req.params.n, req.body, ec2),
    );
  };
}
