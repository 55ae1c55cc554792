package org.rpcrdma.transport;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/** What users of the transport can reach on a connection: no protocol internals. */
class ApiSurfaceTest {
    @Test
    void aConnectionPublishesNoProtocolNumbersOfItsOwn() {
        // the backchannel control program is the transport's business between our own ends
        List<String> constants = Arrays.stream(Connection.class.getFields())
                .filter(f -> Modifier.isStatic(f.getModifiers())).map(Field::getName).toList();
        assertEquals(List.of(), constants, "public static fields of Connection");
    }
}
