/**
 * MQTT over WebSocket on the service's own HTTP server: an upgrade request
 * to `path` (any query string, such as the CLI's
 * `?authenticationScheme=userApiKey`) becomes an MQTT connection of the
 * broker. Other upgrade requests are left to whoever else listens, or
 * answered 404 when nobody does.
 */
import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Aedes } from 'aedes';
import { createWebSocketStream, WebSocketServer } from 'ws';

export const MQTT_PATH = '/mqtt';

export interface MqttWebSocket {
  close(): Promise<void>;
}

export function serveMqttOverWebSocket(server: Server, broker: Aedes, path: string = MQTT_PATH): MqttWebSocket {
  // MQTT clients offer the "mqtt" subprotocol (older ones "mqttv3.1"); answer with the one offered.
  const sockets = new WebSocketServer({
    noServer: true,
    handleProtocols: (offered) => (offered.has('mqtt') ? 'mqtt' : offered.has('mqttv3.1') ? 'mqttv3.1' : false),
  });
  const onUpgrade = (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    const pathname = new URL(request.url ?? '/', 'http://service').pathname;
    if (pathname !== path) {
      // Nothing else answers upgrades on this server: say so rather than leave the socket hanging.
      if (server.listenerCount('upgrade') === 1) socket.end('HTTP/1.1 404 Not Found\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
      return;
    }
    sockets.handleUpgrade(request, socket, head, (websocket) => {
      const stream = createWebSocketStream(websocket);
      // A client that goes away mid-frame is its own business; the broker sees the stream end.
      stream.on('error', () => websocket.terminate());
      broker.handle(stream, request);
    });
  };
  server.on('upgrade', onUpgrade);
  return {
    close: () =>
      new Promise((resolve) => {
        server.off('upgrade', onUpgrade);
        for (const client of sockets.clients) client.terminate();
        sockets.close(() => resolve());
      }),
  };
}
