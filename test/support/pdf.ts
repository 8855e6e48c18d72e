import PDFDocument from 'pdfkit';

/** A real PDF with one page per paragraph, made with pdfkit, for the text-extraction path. */
export function makePdf(title: string, paragraphs: string[]): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const doc = new PDFDocument({ info: { Title: title } });
    const chunks: Buffer[] = [];
    doc.on('data', (c: Buffer) => chunks.push(c));
    doc.on('end', () => resolve(Buffer.concat(chunks)));
    doc.on('error', reject);
    doc.fontSize(18).text(title);
    paragraphs.forEach((p, i) => {
      if (i > 0) doc.addPage();
      doc.fontSize(11).text(p);
    });
    doc.end();
  });
}
