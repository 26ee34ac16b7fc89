import { Type } from '@sinclair/typebox';
import type { Static } from '@sinclair/typebox';
import {
  createBodyValidator,
  dzdToMicroDzd,
  GatewayError,
  isValidModelId,
  LIMITS,
  microDzdToDzd,
  MODEL_ID_RULE,
  StringEnum,
} from '@gateway/contracts';
import type { IdentityStore } from './store.js';
import {
  MODEL_KINDS,
  MODEL_PROVIDERS,
  NODE_PROTOCOLS,
  type CatalogModel,
  type ModelNode,
} from './types.js';

export const MAX_OUTPUT_TOKENS_LIMIT = 1_000_000;
export const MODEL_NODES_MAX_ITEMS = 64;
export const NODE_WEIGHT_MAX = 1_000;
/** DZD per million tokens; keeps the µDZD price within exact JSON rendering. */
export const PRICE_MAX_DZD_PER_M = 1_000_000_000;

const Price = (description: string) =>
  Type.Number({ minimum: 0, maximum: PRICE_MAX_DZD_PER_M, description });

/** `PUT /admin/v1/models/{model}` body (decisions §4). */
export const ModelPutRequestSchema = Type.Object(
  {
    kind: StringEnum(MODEL_KINDS),
    provider: StringEnum(MODEL_PROVIDERS),
    protocol: Type.Optional(
      StringEnum(NODE_PROTOCOLS, { description: 'Node API flavour; openai by default.' }),
    ),
    upstream_model: Type.String({ minLength: 1, maxLength: LIMITS.modelIdMaxLength }),
    input_price_dzd_per_m: Price('DZD per million input tokens, at most 6 decimals.'),
    output_price_dzd_per_m: Price('DZD per million output tokens, at most 6 decimals.'),
    max_output_tokens: Type.Integer({ minimum: 1, maximum: MAX_OUTPUT_TOKENS_LIMIT }),
    nodes: Type.Optional(
      Type.Array(
        Type.Object(
          {
            url: Type.String({ format: 'http-url', maxLength: LIMITS.urlMaxLength }),
            weight: Type.Optional(Type.Integer({ minimum: 1, maximum: NODE_WEIGHT_MAX })),
          },
          { additionalProperties: false },
        ),
        { maxItems: MODEL_NODES_MAX_ITEMS },
      ),
    ),
  },
  { $id: 'ModelPutRequest', additionalProperties: false },
);

export type ModelPutRequest = Static<typeof ModelPutRequestSchema>;

const validateModelPut = createBodyValidator<ModelPutRequest>(ModelPutRequestSchema);

/** A catalog model as the operator API renders it (DZD numbers, ISO time). */
export interface ModelJson {
  id: string;
  kind: CatalogModel['kind'];
  provider: CatalogModel['provider'];
  protocol: CatalogModel['protocol'];
  upstream_model: string;
  input_price_dzd_per_m: number;
  output_price_dzd_per_m: number;
  max_output_tokens: number;
  nodes: ModelNode[];
  updated_at: string;
}

export function modelToJson(model: CatalogModel): ModelJson {
  return {
    id: model.id,
    kind: model.kind,
    provider: model.provider,
    protocol: model.protocol,
    upstream_model: model.upstreamModel,
    input_price_dzd_per_m: microDzdToDzd(model.inputPriceMicroDzdPerM),
    output_price_dzd_per_m: microDzdToDzd(model.outputPriceMicroDzdPerM),
    max_output_tokens: model.maxOutputTokens,
    nodes: model.nodes,
    updated_at: model.updatedAt.toISOString(),
  };
}

export const modelNotFound = (id: string): GatewayError =>
  new GatewayError('model_not_found', `Model '${clipModelId(id)}' not found`, { param: 'model' });

/** Echo at most the id length we accept; ids come from clients. */
function clipModelId(id: string): string {
  return id.length > LIMITS.modelIdMaxLength ? `${id.slice(0, LIMITS.modelIdMaxLength)}…` : id;
}

/** The model catalog: prices in µDZD per million tokens, nodes, output caps. */
export class Catalog<Tx = unknown> {
  readonly #store: IdentityStore<Tx>;

  constructor(deps: { store: IdentityStore<Tx> }) {
    this.#store = deps.store;
  }

  /**
   * Creates or replaces a model (PUT semantics: omitted optional fields take their defaults,
   * `protocol` openai and `nodes` []). `body` is the raw JSON body; 400 `invalid_request_body`
   * when it or the id is not valid.
   */
  async put(id: string, body: unknown): Promise<CatalogModel> {
    if (!isValidModelId(id)) {
      throw new GatewayError('invalid_request_body', MODEL_ID_RULE, { param: 'model' });
    }
    const request = validateModelPut(body);
    return this.#store.upsertModel({
      id,
      kind: request.kind,
      provider: request.provider,
      protocol: request.protocol ?? 'openai',
      upstreamModel: request.upstream_model,
      inputPriceMicroDzdPerM: price(request.input_price_dzd_per_m, 'input_price_dzd_per_m'),
      outputPriceMicroDzdPerM: price(request.output_price_dzd_per_m, 'output_price_dzd_per_m'),
      maxOutputTokens: request.max_output_tokens,
      nodes: (request.nodes ?? []).map((node) =>
        node.weight === undefined ? { url: node.url } : { url: node.url, weight: node.weight },
      ),
    });
  }

  /** 404 `model_not_found` for an unknown id. */
  async get(id: string, tx?: Tx): Promise<CatalogModel> {
    const model = await this.#store.findModel(id, tx);
    if (!model) throw modelNotFound(id);
    return model;
  }

  /** null for an unknown id. */
  find(id: string, tx?: Tx): Promise<CatalogModel | null> {
    return this.#store.findModel(id, tx);
  }

  /** The whole catalog, by id. */
  list(): Promise<CatalogModel[]> {
    return this.#store.listModels();
  }
}

function price(value: number, param: string): bigint {
  try {
    return dzdToMicroDzd(value);
  } catch {
    throw new GatewayError('invalid_request_body', `${param} must have at most 6 decimal places`, {
      param,
    });
  }
}
