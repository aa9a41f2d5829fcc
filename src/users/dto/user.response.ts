import { ApiProperty } from '@nestjs/swagger';
import { isoUtc } from '../../common/http/timestamps.js';
import type { UserRow } from '../users.repository.js';
import { ROLES } from '../../common/auth/roles.js';
import { ID_SCHEMA } from '../../common/openapi/schema-types.js';

export class NotificationPreferences {
  @ApiProperty() email: boolean;
  @ApiProperty() ui: boolean;
}

export class UserResponse {
  @ApiProperty(ID_SCHEMA) id: number;
  @ApiProperty() name: string;
  @ApiProperty() email: string;
  @ApiProperty({ enum: ROLES, isArray: true, example: ['user'] }) roles: string[];
  @ApiProperty({ ...ID_SCHEMA, isArray: true }) client_list: number[];
  @ApiProperty() notification_preferences: NotificationPreferences;
  @ApiProperty() is_active: boolean;
  @ApiProperty() created_at: string;
}

export function toUserResponse(row: UserRow): UserResponse {
  return {
    id: row.id,
    name: row.name,
    email: row.email,
    roles: row.roles,
    client_list: row.client_list,
    notification_preferences: { email: row.notify_email, ui: row.notify_ui },
    is_active: row.is_active,
    created_at: isoUtc(row.created_at) as string,
  };
}
