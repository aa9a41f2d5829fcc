import { Module } from '@nestjs/common';
import type { AppConfig } from '../common/config/app-config.js';
import { APP_CONFIG } from '../common/config/config.module.js';
import { ImageUploadInterceptor } from './image-upload.interceptor.js';
import { ImagesController } from './images.controller.js';
import { ImagesRepository } from './images.repository.js';
import { ImagesService } from './images.service.js';
import { ImageStorage } from './storage/image-storage.js';
import { LocalImageStorage } from './storage/local-image-storage.js';

@Module({
  controllers: [ImagesController],
  providers: [
    ImagesService,
    ImagesRepository,
    ImageUploadInterceptor,
    // The one place that picks the storage driver (an S3 driver would be chosen here from config).
    {
      provide: ImageStorage,
      useFactory: (config: AppConfig) => new LocalImageStorage(config.uploadDir),
      inject: [APP_CONFIG],
    },
  ],
})
export class ImagesModule {}
