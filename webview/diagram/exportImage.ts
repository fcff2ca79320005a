/**
 * The diagram as a file: SVG with the theme's colours written into each element (a copy, so the file looks the
 * same outside VS Code), or PNG drawn from that SVG on a canvas at twice its size. The host saves what it gets.
 */
const PAINTED = ['fill', 'stroke', 'stroke-width', 'font-family', 'font-size', 'font-weight', 'opacity'] as const;

export function standaloneSvg(svg: SVGSVGElement): string {
  const copy = svg.cloneNode(true) as SVGSVGElement;
  const originals = [svg, ...svg.querySelectorAll('*')];
  const copies = [copy, ...copy.querySelectorAll('*')];
  originals.forEach((original, i) => {
    const target = copies[i];
    if (!target) return;
    const computed = getComputedStyle(original);
    for (const property of PAINTED) {
      const value = computed.getPropertyValue(property);
      if (value) target.setAttribute(property, value);
    }
    target.removeAttribute('class');
    target.removeAttribute('tabindex');
  });
  return `<?xml version="1.0" encoding="UTF-8"?>\n${new XMLSerializer().serializeToString(copy)}`;
}

export function pngDataUrl(svgText: string, width: number, height: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const image = new Image();
    image.onload = () => {
      const canvas = document.createElement('canvas');
      const scale = Math.min(2, 16_000 / Math.max(width, height));
      canvas.width = Math.ceil(width * scale);
      canvas.height = Math.ceil(height * scale);
      const context = canvas.getContext('2d');
      if (!context) {
        reject(new Error('This page cannot draw on a canvas.'));
        return;
      }
      context.scale(scale, scale);
      context.drawImage(image, 0, 0, width, height);
      resolve(canvas.toDataURL('image/png'));
    };
    image.onerror = () => reject(new Error('The diagram could not be drawn as an image.'));
    const bytes = new TextEncoder().encode(svgText);
    let binary = '';
    for (const byte of bytes) binary += String.fromCharCode(byte);
    image.src = `data:image/svg+xml;base64,${btoa(binary)}`;
  });
}
