/**
 * The "Images" section: environments packed into one squashfs (or SIF)
 * file each, with the command lines to use them.
 */
import {
  ReactWidget,
  ToolbarButtonComponent,
  copyIcon,
  deleteIcon,
  downloadIcon
} from '@jupyterlab/ui-components';
import { Message } from '@lumino/messaging';
import React, { useEffect, useReducer } from 'react';

import { useSignals } from '../components/hooks';
import { imageFileIcon, packIcon } from '../components/icons';
import { formatBytes } from '../components/format';
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
    <li
      className="jp-GpuEnv-image"
      data-testid="gpu-env-image"
      data-environment={image.environment}
      data-id={image.id}
      data-size={image.size_bytes}
    >
      <div className="jp-GpuEnv-envHeader">
        <span className="jp-GpuEnv-imageTitle" title={image.path}>
          <imageFileIcon.react tag="span" className="jp-GpuEnv-imageIcon" />
          <span className="jp-GpuEnv-envName">{image.environment}</span>
          <span className="jp-GpuEnv-imageFormat">
            {describeImageFormat(image)}
          </span>
        </span>
        <div className="jp-GpuEnv-envActions" role="toolbar">
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
      <div className="jp-GpuEnv-usageNote">{details}</div>
    </li>
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
      {error && (
        <div className="jp-GpuEnv-error" role="alert">
          Could not list images: {error.message}
        </div>
      )}
      {images === null
        ? !error && <div className="jp-GpuEnv-loading">Looking for images…</div>
        : images.length === 0 && (
            <div className="jp-GpuEnv-empty" data-testid="gpu-env-images-empty">
              <packIcon.react tag="span" className="jp-GpuEnv-emptyIcon" />
              <p className="jp-GpuEnv-emptyText">
                No images yet. Pack an environment (the box button on its row)
                to turn its thousands of small files into one squashfs file:
                quick to open from shared filesystems, and usable by Apptainer
                or squashfuse in batch jobs.
              </p>
            </div>
          )}
      {images && images.length > 0 && (
        <ul className="jp-GpuEnv-envList" data-testid="gpu-env-image-list">
          {images.map(image => (
            <ImageRow key={image.id} image={image} model={model} />
          ))}
        </ul>
      )}
    </div>
  );
}

/** The section widget; the list is refreshed whenever it is shown. */
export class ImagesSection extends ReactWidget {
  constructor(private readonly _model: EnvironmentsModel) {
    super();
    this.addClass('jp-GpuEnv-section');
    this.addClass('jp-GpuEnv-imagesSection');
    this.title.label = 'Images';
    this.node.dataset.testid = 'gpu-env-section-images';
  }

  protected override onAfterShow(msg: Message): void {
    super.onAfterShow(msg);
    void this._model.refresh();
  }

  protected render(): JSX.Element {
    return <ImagesView model={this._model} />;
  }
}
