import { Badge, Checkbox, Group, Stack, Switch, Text, TextInput } from '@mantine/core';
import { useState } from 'react';
import {
  IMAGE_TOKENS_MAX,
  INPUT_MODALITIES,
  MODEL_MEDIA_DEFAULTS,
  type CatalogModel,
  type InputModality,
} from '../api/contract';
import { formatCount } from '../format';

/*
 * A model's media fields (`input_modalities`, `image_tokens`, `remote_images`): badges in the
 * catalog's table and the inputs of its edit form. A model from a server that does not answer
 * them shows the defaults the server would apply.
 */

const LABELS: Record<InputModality, string> = {
  text: 'Text',
  image: 'Image',
  audio: 'Audio',
  file: 'File',
};
const WHOLE = /^[1-9][0-9]{0,5}$/;

const modalitiesOf = (model: CatalogModel) =>
  model.input_modalities ?? MODEL_MEDIA_DEFAULTS.input_modalities;

export function ModalityBadges({ model }: { model: CatalogModel }) {
  const modalities = modalitiesOf(model);
  const imageTokens = model.image_tokens ?? MODEL_MEDIA_DEFAULTS.image_tokens;
  const remote = model.remote_images ?? MODEL_MEDIA_DEFAULTS.remote_images;
  const sources = remote ? 'http(s) or data: URLs' : 'data: URLs only';
  return (
    <Stack gap={4}>
      <Group gap={4} data-testid="model-modalities">
        {modalities.map((modality) => (
          <Badge
            key={modality}
            size="xs"
            variant="light"
            color={modality === 'text' ? 'gray' : 'grape'}
          >
            {modality}
          </Badge>
        ))}
      </Group>
      {modalities.includes('image') && (
        <Text
          fz="xs"
          c="dimmed"
          title={`${formatCount(imageTokens)} tokens held per image part; ${sources}`}
        >
          {formatCount(imageTokens)} tok / image{remote ? ', remote URLs' : ''}
        </Text>
      )}
    </Stack>
  );
}

/** The edit form's media state, and the fields to send (all three: PUT resets what is left out). */
export function useMediaForm(model: CatalogModel) {
  const [modalities, setModalities] = useState(modalitiesOf(model));
  const [imageTokens, setImageTokens] = useState(
    String(model.image_tokens ?? MODEL_MEDIA_DEFAULTS.image_tokens),
  );
  const [remoteImages, setRemoteImages] = useState(
    model.remote_images ?? MODEL_MEDIA_DEFAULTS.remote_images,
  );
  return {
    modalities,
    setModalities,
    imageTokens,
    setImageTokens,
    remoteImages,
    setRemoteImages,
    valid: WHOLE.test(imageTokens) && Number(imageTokens) <= IMAGE_TOKENS_MAX,
    change: {
      input_modalities: modalities,
      image_tokens: Number(imageTokens),
      remote_images: remoteImages,
    },
  };
}

export function MediaFields({ form }: { form: ReturnType<typeof useMediaForm> }) {
  // Text is always accepted; the others in their canonical order, each once.
  const pick = (values: string[]) =>
    form.setModalities(INPUT_MODALITIES.filter((m) => m === 'text' || values.includes(m)));
  return (
    <>
      <Checkbox.Group
        label="Input modalities"
        description="Content parts the model accepts in chat messages"
        value={form.modalities}
        onChange={pick}
      >
        <Group gap="md" mt={6}>
          {INPUT_MODALITIES.map((modality) => (
            <Checkbox
              key={modality}
              value={modality}
              label={LABELS[modality]}
              disabled={modality === 'text'}
            />
          ))}
        </Group>
      </Checkbox.Group>
      <TextInput
        label="Image token ceiling"
        description="Tokens the hold counts for each image part"
        inputMode="numeric"
        value={form.imageTokens}
        error={form.valid ? null : `A whole number from 1 to ${formatCount(IMAGE_TOKENS_MAX)}`}
        onChange={(event) => form.setImageTokens(event.currentTarget.value.trim())}
      />
      <Switch
        label="Remote image URLs"
        description="http(s) URLs go to the model node as sent (the gateway never fetches them); off: data: URLs only"
        checked={form.remoteImages}
        onChange={(event) => form.setRemoteImages(event.currentTarget.checked)}
      />
    </>
  );
}
