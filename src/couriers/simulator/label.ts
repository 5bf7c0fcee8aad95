// A real one-page PDF label (pdfkit), as a courier would print it.
import PDFDocument from 'pdfkit';

export interface LabelContent {
  courier: string;
  trackingNumber: string;
  reference: string;
  recipient: string[];
  codAmount: number;
  weightKg: number;
}

export function renderLabel(content: LabelContent): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    // A6, the usual thermal-label size; no compression so tests can read the text back.
    const doc = new PDFDocument({ size: 'A6', margin: 18, compress: false, info: { Title: `Label ${content.trackingNumber}` } });
    const chunks: Buffer[] = [];
    doc.on('data', (c: Buffer) => chunks.push(c));
    doc.on('end', () => resolve(Buffer.concat(chunks)));
    doc.on('error', reject);
    doc.font('Helvetica-Bold').fontSize(14).text(content.courier.toUpperCase());
    doc.moveDown(0.5).fontSize(20).text(content.trackingNumber);
    doc.moveDown(0.5).font('Helvetica').fontSize(9).text(`Ref: ${content.reference}`);
    doc.moveDown(0.5).font('Helvetica-Bold').fontSize(10).text('To:');
    doc.font('Helvetica').text(content.recipient.filter(Boolean).join('\n'));
    doc.moveDown(0.5).text(`Weight: ${content.weightKg.toFixed(2)} kg`);
    doc.text(content.codAmount > 0 ? `Cash on delivery: ${content.codAmount.toFixed(2)}` : 'Prepaid');
    doc.end();
  });
}
