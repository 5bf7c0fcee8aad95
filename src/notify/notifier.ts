// Customer and merchant messages. Every message is recorded in
// outbound_messages inside the caller's transaction (the operator API lists
// them); with SMTP_URL set, emails also go out through nodemailer once the
// transaction has committed.
import crypto from 'node:crypto';
import nodemailer from 'nodemailer';
import type { Sql } from '../platform/db/db.ts';

export interface OutboundMessage {
  accountId: string;
  channel: 'email' | 'sms';
  to: string;
  subject: string | null;
  body: string;
  /** What the message is about, e.g. order_shipped, webhook_dead. */
  kind: string;
}

export interface Notifier {
  /** Records the message in `tx`; a real email goes out once `tx` has committed. */
  send(tx: Sql, message: OutboundMessage): Promise<void>;
}

declare module '../platform/services.ts' {
  interface Services {
    notifier: Notifier;
  }
}

const FROM = 'Merx <no-reply@merx.local>';

export function createNotifier(smtpUrl: string | null, log: { warn(obj: object, msg: string): void }): Notifier {
  const transport = smtpUrl ? nodemailer.createTransport(smtpUrl) : null;
  return {
    async send(tx, message) {
      const viaSmtp = transport !== null && message.channel === 'email';
      await tx.query(
        `INSERT INTO outbound_messages (id, account_id, channel, recipient, subject, body, kind, sent_via)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
        [
          crypto.randomUUID(),
          message.accountId,
          message.channel,
          message.to,
          message.subject,
          message.body,
          message.kind,
          viaSmtp ? 'smtp' : 'outbox',
        ],
      );
      if (viaSmtp) {
        tx.afterCommit(() => {
          void transport
            .sendMail({ from: FROM, to: message.to, subject: message.subject ?? '', text: message.body })
            .catch((err: Error) => log.warn({ err: err.message, kind: message.kind }, 'email could not be sent'));
        });
      }
    },
  };
}
