import { Type, type Static } from 'typebox';
import { ItemList, JsonObject, PositiveInt32, ShortText, Timestamp, Uuid } from './common.ts';
import { LaunchConfig } from './launch.ts';

export const VariationNumber = PositiveInt32;

export const Variation = Type.Object(
  {
    experiment_id: Uuid,
    n: Type.Integer({ minimum: 1 }),
    name: Type.String(),
    config_yaml: Type.String(),
    config_json: JsonObject,
    accelerate_config_json: JsonObject,
    launch_config: LaunchConfig,
    created_at: Timestamp,
  },
  { $id: 'Variation' },
);
export type Variation = Static<typeof Variation>;

export const VariationList = ItemList(Variation);

const ConfigYaml = Type.String({
  maxLength: 1_000_000,
  description: 'YAML: top-level `accelerate:` and `launch:` blocks are split out',
});

export const CreateVariationBody = Type.Object(
  { config_yaml: ConfigYaml, name: Type.Optional(ShortText()) },
  { additionalProperties: false },
);
export type CreateVariationBody = Static<typeof CreateVariationBody>;

export const EditVariationBody = Type.Object(
  { config_yaml: Type.Optional(ConfigYaml), name: Type.Optional(ShortText()) },
  { additionalProperties: false, minProperties: 1 },
);
export type EditVariationBody = Static<typeof EditVariationBody>;

export const VariationParams = Type.Object({ id: Uuid, n: VariationNumber });
