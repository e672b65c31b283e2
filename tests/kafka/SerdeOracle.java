// Kafka's own serializers as a test oracle for kdump's message decoders.
//
//   java -cp 'KAFKA_LIB/*' tests/kafka/SerdeOracle.java < requests
//
// Each input line is "<generated class> <version> <json>": the JSON is read with Kafka's generated
// <class>JsonConverter at that version, the message is written with its generated write() (the bytes a
// broker puts in the log), and the line printed back is "<hex of those bytes> <JsonConverter.write of the
// message>" - the JSON Kafka's own tools print for it. The bytes are version-prefixed (int16), as a
// coordinator value is on disk. Version "key" is a 4.1+ coordinator key: read at version 0 and framed as
// the coordinator serde frames it (int16 record type, then the key). A message Kafka refuses prints
// "ERROR <reason>"; a class generated without a JsonConverter (older releases' core classes) "NO-CONVERTER".
// Single-file source: the JVM compiles it at launch; nothing compiled is kept.

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.Message;
import org.apache.kafka.common.protocol.MessageUtil;

public class SerdeOracle {
    public static void main(String[] args) throws Exception {
        ObjectMapper mapper = new ObjectMapper();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        StringBuilder out = new StringBuilder();
        for (String line; (line = in.readLine()) != null; ) {
            String[] parts = line.split(" ", 3);
            try {
                out.append(answer(mapper, parts[0], parts[1], parts[2]));
            } catch (InvocationTargetException e) {
                out.append("ERROR ").append(e.getCause());
            } catch (RuntimeException e) {
                out.append("ERROR ").append(e);
            }
            out.append('\n');
        }
        System.out.print(out);
    }

    private static String answer(ObjectMapper mapper, String className, String versionText, String json)
            throws Exception {
        boolean key = versionText.equals("key");
        short version = key ? 0 : Short.parseShort(versionText);
        Class<?> messageClass = Class.forName(className);
        Class<?> converter;
        try {
            converter = Class.forName(className + "JsonConverter");
        } catch (ClassNotFoundException e) {
            return "NO-CONVERTER";
        }
        Method read = converter.getMethod("read", JsonNode.class, short.class);
        Method write = converter.getMethod("write", messageClass, short.class);
        Message message = (Message) read.invoke(null, mapper.readTree(json), version);
        StringBuilder hex = new StringBuilder();
        // As in the log: a coordinator key is int16 record type + key, a value int16 version + value.
        // (toCoordinatorTypePrefixedBytes is 4.1+: called by name so that this compiles against 4.0 too.)
        byte[] bytes = key
            ? (byte[]) MessageUtil.class.getMethod("toCoordinatorTypePrefixedBytes", ApiMessage.class)
                .invoke(null, message)
            : MessageUtil.toVersionPrefixedBytes(version, message);
        for (byte b : bytes) {
            hex.append(String.format("%02x", b));
        }
        return hex + " " + write.invoke(null, message, version);
    }
}
