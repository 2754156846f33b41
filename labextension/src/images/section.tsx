/**
 * The "Images" section: environments packed into one squashfs (or SIF)
 * file each, with the command lines to use them.
 */
import {
  ToolbarButtonComponent,
  copyIcon,
  deleteIcon,
  downloadIcon
} from '@jupyterlab/ui-components';
import React, { useEffect, useReducer } from 'react';

import { useSignals } from '../components/hooks';
import { ListingStatus } from '../components/listing';
import { SectionWidget } from '../components/section-widget';
import { imageFileIcon, packIcon } from '../components/icons';
import { formatBytes } from '../components/format';
import { ListRow } from '../components/row';
import { IImage } from '../api/types';
import {
  describeImageFormat,
  describeImageSize,
  formatAge,
  formatDuration
} from '../environments/format';
import { EnvironmentsModel } from '../environments/model';
import { deleteImage, downloadImage, showUsage } from './actions';

/** Ages ("3 min ago") are redrawn this often, in ms. */
const AGE_TICK = 30 * 1000;

function ImageRow(props: {
  image: IImage;
  model: EnvironmentsModel;
}): JSX.Element {
  const { image, model } = props;
  const details = [
    `from ${formatBytes(image.env_size_bytes)}`,
    `packed in ${formatDuration(image.pack_seconds)}`
  ].join(' · ');
  return (
    <ListRow
      kind="image"
      data={{
        environment: image.environment,
        id: image.id,
        size: image.size_bytes
      }}
    >
      <div className="jp-GpuEnv-rowHeader">
        <span className="jp-GpuEnv-imageTitle" title={image.path}>
          <imageFileIcon.react tag="span" className="jp-GpuEnv-icon" />
          <span className="jp-GpuEnv-rowName">{image.environment}</span>
          <span className="jp-GpuEnv-imageFormat jp-GpuEnv-note">
            {describeImageFormat(image)}
          </span>
        </span>
        <div className="jp-GpuEnv-rowActions" role="toolbar">
          <ToolbarButtonComponent
            icon={copyIcon}
            tooltip="Show and copy the command lines to use it"
            dataset={{ action: 'usage' }}
            onClick={() => void showUsage(image)}
          />
          <ToolbarButtonComponent
            icon={downloadIcon}
            tooltip={`Download ${image.path.split('/').pop()}`}
            dataset={{ action: 'download' }}
            onClick={() => downloadImage(model, image)}
          />
          <ToolbarButtonComponent
            icon={deleteIcon}
            tooltip="Delete this image"
            dataset={{ action: 'delete' }}
            onClick={() => void deleteImage(model, image)}
          />
        </div>
      </div>
      <div className="jp-GpuEnv-envMeta">
        <span data-testid="gpu-env-image-size">{describeImageSize(image)}</span>
        {' · '}
        <span title={new Date(image.created_at * 1000).toLocaleString()}>
          {formatAge(image.created_at)}
        </span>
      </div>
      <div className="jp-GpuEnv-note">{details}</div>
    </ListRow>
  );
}

export function ImagesView(props: { model: EnvironmentsModel }): JSX.Element {
  const { model } = props;
  useSignals([model.changed]);
  const [, tick] = useReducer((n: number) => n + 1, 0);
  useEffect(() => {
    const timer = window.setInterval(tick, AGE_TICK);
    return () => window.clearInterval(timer);
  }, []);
  const { imageList: images, imagesError: error } = model;
  return (
    <div className="jp-GpuEnv-sectionBody" data-testid="gpu-env-images">
      <ListingStatus what="images" error={error} pending={images === null} />
      {images?.length === 0 && (
        <div className="jp-GpuEnv-empty" data-testid="gpu-env-images-empty">
          <packIcon.react tag="span" className="jp-GpuEnv-icon" />
          <p>
            No images yet. Pack an environment (the box button on its row) to
            turn its thousands of small files into one squashfs file: quick to
            open from shared filesystems, and usable by Apptainer or squashfuse
            in batch jobs.
          </p>
        </div>
      )}
      {images && images.length > 0 && (
        <ul className="jp-GpuEnv-list" data-testid="gpu-env-image-list">
          {images.map(image => (
            <ImageRow key={image.id} image={image} model={model} />
          ))}
        </ul>
      )}
    </div>
  );
}

/** The section widget; the list is refreshed whenever it is shown. */
export class ImagesSection extends SectionWidget {
  constructor(private readonly _model: EnvironmentsModel) {
    super('images', 'Images');
  }

  protected onShown(): void {
    void this._model.refresh();
  }

  protected render(): JSX.Element {
    return <ImagesView model={this._model} />;
  }
}
