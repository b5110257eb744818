import java.io.BufferedOutputStream;
import java.io.BufferedReader;
import java.io.FileInputStream;
import java.io.FileOutputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.lang.reflect.Constructor;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.HashMap;
import java.util.Map;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;

import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.Message;
import org.apache.kafka.common.protocol.MessageUtil;
import org.apache.kafka.common.protocol.Readable;

/**
 * Kafka's own generated message classes as the oracle of conformance/codec_diff.py.
 *
 *   java CodecDiff CASES.jsonl RESULTS.jsonl
 *
 * Each input line is one case, {"op", "name", "v", ...}:
 *   "build": {"json": {...}} - Kafka's XxxDataJsonConverter.read builds the message from
 *            JSON, Kafka's write serializes it (what our decoder must read);
 *   "parse": {"b64": "..."} - Kafka's XxxData reads our bytes (all of them must be used),
 *            then serializes them again (what must equal our bytes).
 * Each output line: {"ok": true, "b64": Kafka's bytes, "json": the message as Kafka's
 * converter writes it (records included)} or {"ok": false, "error": "..."}.
 */
public class CodecDiff {
    private static final ObjectMapper MAPPER = new ObjectMapper();
    private static final String PKG = "org.apache.kafka.common.message.";
    private static final Map<String, Codec> CODECS = new HashMap<>();

    private record Codec(Constructor<?> fromBytes, Method fromJson, Method toJson) { }

    private static Codec codec(String name) throws ReflectiveOperationException {
        Codec c = CODECS.get(name);
        if (c == null) {
            Class<?> data = Class.forName(PKG + name + "Data");
            Class<?> conv = Class.forName(PKG + name + "DataJsonConverter");
            c = new Codec(data.getConstructor(Readable.class, short.class),
                          conv.getMethod("read", JsonNode.class, short.class),
                          conv.getMethod("write", data, short.class, boolean.class));
            CODECS.put(name, c);
        }
        return c;
    }

    private static ObjectNode run(JsonNode in) throws Throwable {
        String name = in.get("name").asText();
        short version = (short) in.get("v").asInt();
        Codec c = codec(name);
        Message msg;
        if (in.get("op").asText().equals("parse")) {
            byte[] bytes = Base64.getDecoder().decode(in.get("b64").asText());
            ByteBufferAccessor acc = new ByteBufferAccessor(ByteBuffer.wrap(bytes));
            msg = (Message) c.fromBytes.newInstance(acc, version);
            if (acc.remaining() != 0) {
                throw new IllegalStateException(acc.remaining() + " bytes left unread");
            }
        } else {
            msg = (Message) c.fromJson.invoke(null, in.get("json"), version);
        }
        // JSON first: serializing may consume a records field's buffer.
        JsonNode json = (JsonNode) c.toJson.invoke(null, msg, version, true);
        ByteBuffer buf = MessageUtil.toByteBufferAccessor(msg, version).buffer();
        if (buf.position() > 0) {  // not flipped for reading yet
            buf.flip();
        }
        byte[] out = new byte[buf.remaining()];
        buf.get(out);
        ObjectNode res = MAPPER.createObjectNode();
        res.put("ok", true);
        res.put("b64", Base64.getEncoder().encodeToString(out));
        res.set("json", json);
        return res;
    }

    public static void main(String[] args) throws Exception {
        try (BufferedReader in = new BufferedReader(new InputStreamReader(
                 new FileInputStream(args[0]), StandardCharsets.UTF_8), 1 << 20);
             PrintStream out = new PrintStream(new BufferedOutputStream(
                 new FileOutputStream(args[1]), 1 << 20), false, StandardCharsets.UTF_8)) {
            String line;
            while ((line = in.readLine()) != null) {
                ObjectNode res;
                try {
                    res = run(MAPPER.readTree(line));
                } catch (Throwable t) {
                    Throwable cause = t instanceof InvocationTargetException ? t.getCause() : t;
                    res = MAPPER.createObjectNode();
                    res.put("ok", false);
                    res.put("error", String.valueOf(cause));
                }
                out.println(MAPPER.writeValueAsString(res));
            }
        }
    }
}
