import { Inject, Injectable } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import type { AppConfig } from '../common/config/app-config.js';
import { APP_CONFIG } from '../common/config/config.module.js';
import { UsersService } from '../users/users.service.js';
import { DemoDataService } from './demo-data.service.js';

interface FirstStartResult {
  adminCreated: boolean;
  adminEmail: string;
  /** Only when generated: shown once, never stored in clear. */
  generatedPassword?: string;
  demoData: boolean;
}

/** On an empty database: the bootstrap admin and, unless disabled, demo data. */
@Injectable()
export class FirstStartService {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly users: UsersService,
    private readonly demo: DemoDataService,
  ) {}

  async run(): Promise<FirstStartResult> {
    if ((await this.users.count()) > 0)
      return { adminCreated: false, adminEmail: this.config.adminEmail, demoData: false };
    const generatedPassword = this.config.adminPassword ? undefined : randomBytes(12).toString('base64url');
    await this.users.createFirstAdmin(
      this.config.adminEmail,
      this.config.adminPassword ?? (generatedPassword as string),
    );
    if (this.config.seedDemoData) await this.demo.seed();
    return {
      adminCreated: true,
      adminEmail: this.config.adminEmail,
      generatedPassword,
      demoData: this.config.seedDemoData,
    };
  }
}
