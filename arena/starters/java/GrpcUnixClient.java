// A small gRPC client over a Unix socket: just enough HTTP/2 (RFC 9113) for Arena's protocol,
// a unary call and a bidirectional stream, with messages as bytes (protobuf-java encodes
// them). Why not grpc-java: Debian's grpc-java reaches Unix sockets only through Netty's
// native epoll transport, which Debian ships without its native library. Java 16+ opens
// Unix sockets itself (UnixDomainSocketAddress), so the rest is framing. Made by
// `arena bot new`; there should be no need to edit it.
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.OutputStream;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.Channels;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;

final class GrpcUnixClient implements AutoCloseable {
  private static final byte[] PREFACE =
      "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".getBytes(StandardCharsets.US_ASCII);
  private static final int DATA = 0, HEADERS = 1, RST_STREAM = 3, SETTINGS = 4, PING = 6,
      GOAWAY = 7, WINDOW_UPDATE = 8;
  private static final int END_STREAM = 0x1, ACK = 0x1, END_HEADERS = 0x4, PADDED = 0x8;
  // What this client lets the arena send before it says it has read it: large, so that a
  // window update is needed only now and then.
  private static final int RECEIVE_WINDOW = 1 << 30;
  private static final int UPDATE_AFTER = 1 << 20;

  /** One HTTP/2 stream (one call): bytes received not yet taken, and its send window. */
  private static final class Stream {
    byte[] received = new byte[0];
    boolean closed;
    long sendWindow;
    int unacknowledged;
  }

  private final SocketChannel channel;
  private final DataInputStream in;
  private final OutputStream out;
  private final Map<Integer, Stream> streams = new HashMap<>();
  private int nextStreamId = 1;   // a client's streams are odd
  private long connectionSendWindow = 65535;
  private long peerInitialWindow = 65535;
  private int peerMaxFrame = 16384;
  private int connectionUnacknowledged;

  GrpcUnixClient(String socketPath) throws IOException {
    channel = SocketChannel.open(StandardProtocolFamily.UNIX);
    channel.connect(UnixDomainSocketAddress.of(socketPath));
    in = new DataInputStream(new java.io.BufferedInputStream(Channels.newInputStream(channel)));
    out = new java.io.BufferedOutputStream(Channels.newOutputStream(channel));
    out.write(PREFACE);
    // Settings: no server push (2 = 0), a large initial stream window (4).
    byte[] settings = {0, 2, 0, 0, 0, 0, 0, 4, 0, 0, 0, 0};
    putInt(settings, 8, RECEIVE_WINDOW);
    writeFrame(SETTINGS, 0, 0, settings);
    writeWindowUpdate(0, RECEIVE_WINDOW - 65535);   // the connection's window, likewise
    out.flush();
  }

  /** A unary call: the reply's bytes, or null when the call failed (status not OK). */
  byte[] unary(String path, byte[] request) throws IOException {
    int id = open(path, Map.of());
    send(id, request, true);
    return receive(id);
  }

  /** Opens a streaming call with extra metadata; returns its stream id. */
  int open(String path, Map<String, String> metadata) throws IOException {
    int id = nextStreamId;
    nextStreamId += 2;
    Stream stream = new Stream();
    stream.sendWindow = peerInitialWindow;
    streams.put(id, stream);
    ByteArrayOutputStream block = new ByteArrayOutputStream();
    header(block, ":method", "POST");
    header(block, ":scheme", "http");
    header(block, ":path", path);
    header(block, ":authority", "localhost");
    header(block, "content-type", "application/grpc");
    header(block, "te", "trailers");
    for (Map.Entry<String, String> entry : metadata.entrySet()) {
      header(block, entry.getKey(), entry.getValue());
    }
    writeFrame(HEADERS, END_HEADERS, id, block.toByteArray());
    out.flush();
    return id;
  }

  /** Sends one message on a stream (length-prefixed, uncompressed, as gRPC frames it). */
  void send(int id, byte[] message, boolean last) throws IOException {
    byte[] framed = new byte[5 + message.length];
    putInt(framed, 1, message.length);
    System.arraycopy(message, 0, framed, 5, message.length);
    int offset = 0;
    do {
      Stream stream = streams.get(id);
      // Flow control: wait (reading the arena's frames) until both windows have room.
      while (Math.min(stream.sendWindow, connectionSendWindow) <= 0 && framed.length > 0) {
        if (!readFrame()) throw new EOFException("the arena closed the connection");
      }
      int size = (int) Math.min(Math.min(framed.length - offset, peerMaxFrame),
                                Math.min(stream.sendWindow, connectionSendWindow));
      boolean end = last && offset + size == framed.length;
      writeFrame(DATA, end ? END_STREAM : 0, id, Arrays.copyOfRange(framed, offset, offset + size));
      stream.sendWindow -= size;
      connectionSendWindow -= size;
      offset += size;
    } while (offset < framed.length);
    out.flush();
  }

  /** The next message on a stream, or null when the stream has ended (or the connection). */
  byte[] receive(int id) throws IOException {
    Stream stream = streams.get(id);
    while (true) {
      byte[] buffer = stream.received;
      if (buffer.length >= 5) {
        int length = getInt(buffer, 1);
        if (buffer.length >= 5 + length) {
          stream.received = Arrays.copyOfRange(buffer, 5 + length, buffer.length);
          return Arrays.copyOfRange(buffer, 5, 5 + length);
        }
      }
      if (stream.closed || !readFrame()) return null;
    }
  }

  /** Reads and handles one frame; false at the end of the connection. */
  private boolean readFrame() throws IOException {
    byte[] head = new byte[9];
    try {
      in.readFully(head);
    } catch (EOFException end) {
      return false;
    }
    int length = ((head[0] & 0xff) << 16) | ((head[1] & 0xff) << 8) | (head[2] & 0xff);
    int type = head[3] & 0xff, flags = head[4] & 0xff, id = getInt(head, 5) & 0x7fffffff;
    byte[] payload = new byte[length];
    in.readFully(payload);
    Stream stream = streams.get(id);
    switch (type) {
      case DATA:
        if (stream != null) {
          int start = 0, end = length;
          if ((flags & PADDED) != 0) {
            start = 1;
            end = length - (payload[0] & 0xff);
          }
          byte[] joined = Arrays.copyOf(stream.received, stream.received.length + end - start);
          System.arraycopy(payload, start, joined, stream.received.length, end - start);
          stream.received = joined;
          stream.closed |= (flags & END_STREAM) != 0;
          stream.unacknowledged += length;
          if (stream.unacknowledged >= UPDATE_AFTER && !stream.closed) {
            writeWindowUpdate(id, stream.unacknowledged);
            stream.unacknowledged = 0;
          }
        }
        connectionUnacknowledged += length;
        if (connectionUnacknowledged >= UPDATE_AFTER) {
          writeWindowUpdate(0, connectionUnacknowledged);
          connectionUnacknowledged = 0;
        }
        out.flush();
        break;
      case HEADERS:
        // Response headers and trailers: their HPACK block is not decoded (nothing in it is
        // needed; a failed call ends without a message, which receive() reports as null).
        if (stream != null && (flags & END_STREAM) != 0) stream.closed = true;
        break;
      case RST_STREAM:
        if (stream != null) stream.closed = true;
        break;
      case SETTINGS:
        if ((flags & ACK) == 0) {
          for (int at = 0; at + 6 <= length; at += 6) {
            int key = ((payload[at] & 0xff) << 8) | (payload[at + 1] & 0xff);
            long value = getInt(payload, at + 2) & 0xffffffffL;
            if (key == 4) {   // INITIAL_WINDOW_SIZE: open streams' windows move by the change
              for (Stream open : streams.values()) open.sendWindow += value - peerInitialWindow;
              peerInitialWindow = value;
            } else if (key == 5) {   // MAX_FRAME_SIZE
              peerMaxFrame = (int) value;
            }
          }
          writeFrame(SETTINGS, ACK, 0, new byte[0]);
          out.flush();
        }
        break;
      case PING:
        if ((flags & ACK) == 0) {
          writeFrame(PING, ACK, 0, payload);
          out.flush();
        }
        break;
      case WINDOW_UPDATE:
        long increment = getInt(payload, 0) & 0x7fffffffL;
        if (id == 0) {
          connectionSendWindow += increment;
        } else if (stream != null) {
          stream.sendWindow += increment;
        }
        break;
      case GOAWAY:
        // The arena is closing: streams it already took go on until they end.
        break;
      default:
        break;   // PRIORITY, CONTINUATION of ignored headers, unknown types: nothing to do
    }
    return true;
  }

  private void writeFrame(int type, int flags, int id, byte[] payload) throws IOException {
    byte[] head = {(byte) (payload.length >>> 16), (byte) (payload.length >>> 8),
                   (byte) payload.length, (byte) type, (byte) flags, 0, 0, 0, 0};
    putInt(head, 5, id);
    out.write(head);
    out.write(payload);
  }

  private void writeWindowUpdate(int id, int increment) throws IOException {
    byte[] payload = new byte[4];
    putInt(payload, 0, increment);
    writeFrame(WINDOW_UPDATE, 0, id, payload);
  }

  /** One header as an HPACK "literal without indexing, new name", no Huffman coding. */
  private static void header(ByteArrayOutputStream block, String name, String value) {
    block.write(0);
    string(block, name.getBytes(StandardCharsets.UTF_8));
    string(block, value.getBytes(StandardCharsets.UTF_8));
  }

  private static void string(ByteArrayOutputStream block, byte[] bytes) {
    int length = bytes.length;   // an HPACK integer with a 7-bit prefix
    if (length < 127) {
      block.write(length);
    } else {
      block.write(127);
      for (length -= 127; length >= 128; length >>>= 7) block.write((length & 0x7f) | 0x80);
      block.write(length);
    }
    block.write(bytes, 0, bytes.length);
  }

  private static int getInt(byte[] bytes, int at) {
    return ((bytes[at] & 0xff) << 24) | ((bytes[at + 1] & 0xff) << 16)
        | ((bytes[at + 2] & 0xff) << 8) | (bytes[at + 3] & 0xff);
  }

  private static void putInt(byte[] bytes, int at, int value) {
    bytes[at] = (byte) (value >>> 24);
    bytes[at + 1] = (byte) (value >>> 16);
    bytes[at + 2] = (byte) (value >>> 8);
    bytes[at + 3] = (byte) value;
  }

  @Override
  public void close() throws IOException {
    channel.close();
  }
}
