import {
  createBodyValidator,
  dzdToMicroDzd,
  GatewayError,
  isValidModelId,
  microDzdToDzd,
  MODEL_ID_RULE,
  MODEL_MEDIA_DEFAULTS,
  ModelPutRequestSchema,
} from '@gateway/contracts';
import type { CatalogModel, ModelPutRequest } from '@gateway/contracts';
import { modelNotFound } from '@gateway/ledger-calls';
import type { IdentityRepository } from '../identity/identity-repository.js';
import type { ModelRecord } from '../identity/types.js';

const validateModelPut = createBodyValidator<ModelPutRequest>(ModelPutRequestSchema);

/** A catalog model as the operator API renders it (DZD numbers, ISO time). */
export function modelToJson(model: ModelRecord): CatalogModel {
  return {
    id: model.id,
    kind: model.kind,
    provider: model.provider,
    protocol: model.protocol,
    upstream_model: model.upstreamModel,
    input_price_dzd_per_m: microDzdToDzd(model.inputPriceMicroDzdPerM),
    output_price_dzd_per_m: microDzdToDzd(model.outputPriceMicroDzdPerM),
    max_output_tokens: model.maxOutputTokens,
    input_modalities: model.inputModalities,
    image_tokens: model.imageTokens,
    remote_images: model.remoteImages,
    nodes: model.nodes,
    updated_at: model.updatedAt.toISOString(),
  };
}

export { modelNotFound };

/** The model catalog: prices in µDZD per million tokens, nodes, output caps. */
export class Catalog {
  readonly #store: IdentityRepository;

  constructor(deps: { store: IdentityRepository }) {
    this.#store = deps.store;
  }

  /**
   * Creates or replaces a model (PUT semantics: omitted optional fields take their defaults,
   * `protocol` openai, `nodes` [], `input_modalities` ["text"], `image_tokens` 1445,
   * `remote_images` false). `body` is the raw JSON body; 400 `invalid_request_body`
   * when it or the id is not valid.
   */
  async put(id: string, body: unknown): Promise<ModelRecord> {
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
      inputModalities: request.input_modalities ?? [...MODEL_MEDIA_DEFAULTS.input_modalities],
      imageTokens: request.image_tokens ?? MODEL_MEDIA_DEFAULTS.image_tokens,
      remoteImages: request.remote_images ?? MODEL_MEDIA_DEFAULTS.remote_images,
      nodes: (request.nodes ?? []).map((node) =>
        node.weight === undefined ? { url: node.url } : { url: node.url, weight: node.weight },
      ),
    });
  }

  /** 404 `model_not_found` for an unknown id. */
  async get(id: string): Promise<ModelRecord> {
    const model = await this.#store.findModel(id);
    if (!model) throw modelNotFound(id);
    return model;
  }

  /** null for an unknown id. */
  find(id: string): Promise<ModelRecord | null> {
    return this.#store.findModel(id);
  }

  /** The whole catalog, by id. */
  list(): Promise<ModelRecord[]> {
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
